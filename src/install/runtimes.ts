import { execFile } from 'node:child_process'
import { findCommand, type CommandHost } from '../children/resolve-command.js'

/** How a server from the registry runs: an npm package (npx), a PyPI one (uvx), an OCI image (docker), or a remote endpoint. */
export type PackageKind = 'npm' | 'pypi' | 'oci' | 'remote'

export const PACKAGE_KINDS: readonly PackageKind[] = ['npm', 'pypi', 'oci', 'remote']

/** Whether a kind can run here, and if not, why and what to install. */
export type RuntimeCheck = { ok: true } | { ok: false; why: string }

/** How long `docker version` may take to say whether an engine answers. */
const DOCKER_PROBE_MS = 10_000

/** The command each package kind runs with. */
const RUNNER: Readonly<Record<Exclude<PackageKind, 'remote'>, string>> = {
  npm: 'npx',
  pypi: 'uvx',
  oci: 'docker',
}

const INSTALL: Readonly<Record<Exclude<PackageKind, 'remote'>, string>> = {
  npm: 'install Node.js, which brings npm and npx (https://nodejs.org/)',
  pypi: 'install uv, which brings uvx (https://docs.astral.sh/uv/getting-started/installation/)',
  oci: 'install Docker (https://docs.docker.com/get-docker/)',
}

/**
 * Whether `kind` can run on this machine: its runner is found the way a
 * child's command is (resolve-command.ts), and for an OCI image a Docker
 * engine answers `docker version`. A remote needs nothing here.
 */
export async function checkRuntime(kind: PackageKind, host: CommandHost): Promise<RuntimeCheck> {
  if (kind === 'remote') return { ok: true }
  const runner = RUNNER[kind]
  const found = findCommand(runner, host)
  if (found === undefined) return { ok: false, why: `${runner} is not found on PATH: ${INSTALL[kind]}` }
  if (kind !== 'oci') return { ok: true }
  const engine = await dockerEngine(found, host.env)
  return engine.ok
    ? engine
    : { ok: false, why: `docker is here but no Docker engine answers (${engine.why}): start Docker` }
}

/** Whether `docker version` reaches an engine; if not, the first line it said. */
function dockerEngine(docker: string, env: Record<string, string | undefined>): Promise<RuntimeCheck> {
  return new Promise((resolve) => {
    execFile(
      docker,
      ['version', '--format', '{{.Server.Version}}'],
      { env, timeout: DOCKER_PROBE_MS, windowsHide: true },
      (error, _stdout, stderr) => {
        if (!error) return resolve({ ok: true })
        const said = String(stderr).trim().split('\n')[0] || (error.killed ? 'no answer' : error.message)
        resolve({ ok: false, why: said })
      },
    )
  })
}
