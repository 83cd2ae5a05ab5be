import { compactJson } from './config-text.js'
import type { AddResult } from './add-server.js'
import type { ImportResult } from './from-client.js'
import type { KeptSecret } from './keep-secrets.js'

/** What `myc add` says on stdout: the entry (--dry-run), or what was added, its tools and where each secret went. */
export function addReport(result: AddResult): string {
  if (result.dryRun) {
    const lines = [JSON.stringify({ [result.key]: result.entry }, null, 2)]
    for (const secret of result.secrets) lines.push(`# ${secretLine(result.key, secret)}`)
    if (result.warning) lines.push(`# warning: ${result.warning}`)
    lines.push(`# nothing written (--dry-run); without it, this goes into ${result.file}`)
    return lines.join('\n')
  }
  const names = result.tools.map((t) => t.name)
  const shown = names.length > 12 ? `${names.slice(0, 12).join(', ')}, …` : names.join(', ')
  return [
    `added "${result.key}" to ${result.file}: ${result.name} ${result.version} (${result.kind})`,
    `  ${compactJson(result.entry)}`,
    `  ${names.length} ${names.length === 1 ? 'tool' : 'tools'}${names.length ? `: ${shown}` : ''}`,
    ...result.secrets.map((s) => `  ${secretLine(result.key, s)}`),
    `next: myc tools --config ${result.file}`,
  ].join('\n')
}

function secretLine(key: string, secret: KeptSecret): string {
  return secret.kept === 'sealed'
    ? `secret ${secret.what}: sealed on this machine as \${secret:${secret.name}} (never in the config)`
    : `secret ${secret.what}: export ${secret.variable} before myc starts "${key}" (the config names it as \${${secret.variable}})`
}

/** What `myc add --from-client` says: each server imported (or that would be), its tools and secrets, and each skipped with why. */
export function importReport(result: ImportResult): string {
  const lines = [`${result.client}: read ${result.files.join(', ')}`]
  for (const a of result.added) {
    lines.push(
      result.dryRun
        ? `would add "${a.key}": ${compactJson(a.entry)}`
        : `added "${a.key}": ${a.tools.length} ${a.tools.length === 1 ? 'tool' : 'tools'}${a.tools.length ? ` (${a.tools.slice(0, 8).join(', ')}${a.tools.length > 8 ? ', …' : ''})` : ''}`,
    )
    for (const s of a.secrets) lines.push(`  ${secretLine(a.key, s)}`)
  }
  for (const s of result.skipped) lines.push(`skipped "${s.name}" (${s.from}): ${s.why}`)
  if (result.added.length === 0) lines.push(`nothing to add to ${result.file}`)
  else
    lines.push(
      result.dryRun
        ? `nothing written (--dry-run); without it, these go into ${result.file}`
        : `written to ${result.file}; next: myc tools --config ${result.file}`,
    )
  return lines.join('\n')
}
