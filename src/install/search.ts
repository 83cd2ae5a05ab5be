import { terminalText } from '../terminal-text.js'
import { RegistryClient } from './registry-client.js'
import { kindsOf } from './server-json.js'

/** One line of `myc search`: a server's name, its latest version, how it runs, what it is. */
export interface SearchRow {
  name: string
  version: string
  kinds: string[]
  description: string
}

/** The latest version of each server whose name matches `words`, at most `limit` (the registry's cursor followed). */
export async function searchRegistry(options: {
  words: string
  limit: number
  registryUrl: string
  fetch?: typeof fetch
}): Promise<SearchRow[]> {
  const servers = await new RegistryClient(options.registryUrl, options.fetch).search(options.words, options.limit)
  return servers.map((s) => ({
    name: s.name,
    version: s.version,
    kinds: kindsOf(s),
    description: s.description ?? s.title ?? '',
  }))
}

/** The widest a description gets in the table. */
const DESCRIPTION_WIDTH = 80

/**
 * The rows as a table. Every cell is text from the registry, so its control
 * characters are shown as escapes before the columns are measured (a cell
 * can neither move the cursor nor hide the others); a description is cut
 * to one line of 80 characters.
 */
export function searchTable(rows: readonly SearchRow[]): string {
  const cells = rows.map((r) => [
    terminalText(r.name),
    terminalText(r.version),
    terminalText(r.kinds.join(', ') || '-'),
    shortLine(terminalText(r.description)),
  ])
  const head = ['NAME', 'VERSION', 'RUNS', 'DESCRIPTION']
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: readonly string[]) =>
    c
      .map((cell, i) => (i < c.length - 1 ? cell.padEnd(widths[i]!) : cell))
      .join('  ')
      .trimEnd()
  return [line(head), ...cells.map(line)].join('\n')
}

function shortLine(text: string): string {
  const line = text.split('\n')[0]!.trim()
  return line.length > DESCRIPTION_WIDTH ? `${line.slice(0, DESCRIPTION_WIDTH - 3)}...` : line
}
