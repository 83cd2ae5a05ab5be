import { stripAnsi } from './terminal-colour.js'

/** The widest line of `--help` (citty pads its tables to the widest row, descriptions included). */
const USAGE_WIDTH = 100

/**
 * citty's usage text fitted to `width` columns: trailing padding removed,
 * and a longer line wrapped at spaces. A row of a table (name, a gap of two
 * or more spaces, description) goes on under its description; any other
 * line under its own indentation. Escape codes (colour) count for nothing.
 */
export function fitUsage(usage: string, width = USAGE_WIDTH): string {
  return usage
    .split('\n')
    .flatMap((line) => fitLine(trimEnd(line), width))
    .join('\n')
}

function fitLine(line: string, width: number): string[] {
  if (visible(line) <= width) return [line]
  const row = /^(\s*\S.*?\s{2,})(\S.*)$/.exec(line)
  const lead = /^\s*/.exec(line)![0]
  const [head, body] = row && visible(row[1]!) <= width / 2 ? [row[1]!, row[2]!] : [lead, line.slice(lead.length)]
  const indent = ' '.repeat(visible(head))
  const lines: string[] = []
  let current = head
  let empty = true
  for (const word of body.split(' ')) {
    if (!empty && visible(current) + 1 + visible(word) > width) {
      lines.push(current)
      current = indent
      empty = true
    }
    current += empty ? word : ` ${word}`
    empty = false
  }
  lines.push(current)
  return lines
}

/** A line without its trailing white space, also where escape codes (colour) close after it. */
function trimEnd(line: string): string {
  // eslint-disable-next-line no-control-regex
  return line.replace(/\s+((?:\u001b\[[0-9;]*m)*)$/, '$1')
}

function visible(text: string): number {
  return stripAnsi(text).length
}
