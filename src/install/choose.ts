import { MycError } from '../errors.js'
import type { PackageKind, RuntimeCheck } from './runtimes.js'
import type { Package, Remote, ServerJson } from './server-json.js'

/** One way a server can run that `myc add` can write: a package of a kind it runs over stdio, or a remote. */
export type Candidate = { kind: Exclude<PackageKind, 'remote'>; pkg: Package } | { kind: 'remote'; remote: Remote }

/** What a server offers: the candidates (remotes first, then packages as listed) and what cannot be added, in words. */
function candidatesOf(server: ServerJson): { candidates: Candidate[]; unsupported: string[] } {
  const candidates: Candidate[] = (server.remotes ?? []).map((remote) => ({ kind: 'remote', remote }))
  const unsupported: string[] = []
  for (const pkg of server.packages ?? []) {
    const kind = pkg.registryType.toLowerCase()
    if (kind !== 'npm' && kind !== 'pypi' && kind !== 'oci') unsupported.push(`a ${pkg.registryType} package`)
    else if (pkg.transport.type !== 'stdio')
      unsupported.push(`a ${kind} package served over ${pkg.transport.type} (myc add runs packages over stdio)`)
    else candidates.push({ kind, pkg })
  }
  return { candidates, unsupported }
}

export interface ChooseOptions {
  /** `--package`: that kind, or an error. */
  forced?: PackageKind | undefined
  /** Whether a kind can run here. */
  check: (kind: PackageKind) => Promise<RuntimeCheck>
  /** `--dry-run`: a runtime missing here is a warning, not an error. */
  dryRun: boolean
}

/**
 * The candidate to add, by the documented order (docs/registry.md): the one
 * `--package` names; else a remote (it needs nothing installed here); else
 * the first package, as the server lists them, whose runtime is found here.
 * A runtime missing here is a `runtime_missing` error saying what to install
 * (with --dry-run, a warning and the first candidate).
 */
export async function choose(
  server: ServerJson,
  options: ChooseOptions,
): Promise<{ candidate: Candidate; warning?: string }> {
  const { candidates, unsupported } = candidatesOf(server)
  const offered = [...new Set(candidates.map((c) => c.kind)), ...unsupported].join(', ') || 'nothing to run'
  const pool = options.forced ? candidates.filter((c) => c.kind === options.forced) : candidates
  if (pool.length === 0) {
    if (options.forced)
      throw new MycError(
        'usage',
        `--package ${options.forced}: "${server.name}" has no such package; it offers ${offered}`,
      )
    throw new MycError('runtime_missing', `"${server.name}" offers nothing myc add can run: ${offered}`, {
      fix: 'add it by hand (docs/configuration.md), following its documentation',
    })
  }
  const missing: string[] = []
  for (const candidate of pool) {
    const check = await options.check(candidate.kind)
    if (check.ok) return { candidate }
    missing.push(`${candidate.kind}: ${check.why}`)
  }
  const why = [...new Set(missing)].join('; ')
  if (options.dryRun) return { candidate: pool[0]!, warning: `it would not run here (${why})` }
  const others = options.forced ? candidates.filter((c) => c.kind !== options.forced).map((c) => c.kind) : []
  throw new MycError('runtime_missing', `"${server.name}" cannot run here: ${why}`, {
    fix: others.length
      ? `install what is named, or choose another of its packages with --package ${[...new Set(others)].join('|')}`
      : 'install what is named, then run myc add again',
  })
}
