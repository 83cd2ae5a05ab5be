import path from 'node:path'
import type { HiddenItem, LockChange } from '../pinning/compare.js'
import { HIDDEN_TEXT_NAMES, showHiddenText } from '../pinning/hidden-text.js'
import { definitionDiff, type DiffPart } from '../pinning/word-diff.js'
import { terminalText } from '../terminal-text.js'
import type { PinSurvey } from './pins.js'

/** `myc pin --check --json` and `myc pin --json`: what differs, what is hidden, what could not be read. */
export function pinReportJson(survey: PinSurvey, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { changes, hidden } = survey.comparison
  return {
    ok: changes.length === 0 && survey.unchecked.length === 0,
    lock: survey.lockFile,
    locked: survey.lock !== undefined,
    ...extra,
    changes: changes.map(({ server, kind, name, change }) => ({ server, kind, name, change })),
    hidden: hidden.map(hiddenJson),
    unchecked: survey.unchecked,
  }
}

export function hiddenJson({ server, kind, name, text }: HiddenItem): Record<string, unknown> {
  return { server, kind, name, id: `${server}:${name}`, text }
}

/** Text from a child, made safe to print: controls and bidi as escapes, tag characters too. */
function shown(text: string): string {
  return showHiddenText(terminalText(text))
}

const RED = '\u001b[31m'
const GREEN = '\u001b[32m'
const PLAIN = '\u001b[39m'

/** A word diff as text: `[-removed-]` and `{+added+}` (red and green as well on a terminal); each later line indented. */
function diffText(parts: readonly DiffPart[], colour: boolean, indent: string): string {
  const paint = (code: string, text: string) => (colour ? `${code}${text}${PLAIN}` : text)
  return parts
    .map((p) =>
      p.op === 'same'
        ? shown(p.text)
        : p.op === 'removed'
          ? paint(RED, `[-${shown(p.text)}-]`)
          : paint(GREEN, `{+${shown(p.text)}+}`),
    )
    .join('')
    .replace(/\n/g, `\n${indent}`)
}

/** One change, as a person reviews it: added with its fields, changed with a word diff of each field that differs, removed alone. */
function changeText(change: LockChange, colour: boolean): string {
  const head = `${change.change.padEnd(8)} ${change.kind.padEnd(6)} ${shown(`${change.server}:${change.name}`)}`
  if (change.change === 'removed') return head
  const fields = definitionDiff(change.change === 'added' ? undefined : change.before, change.after)
  const lines = fields
    .filter((f) => change.change === 'changed' || f.field !== 'name')
    .map((f) => {
      const parts = change.change === 'added' ? f.parts.map((p) => ({ ...p, op: 'same' as const })) : f.parts
      return `    ${f.field}: ${diffText(parts, colour, '      ')}`
    })
  return [head, ...lines].join('\n')
}

/** The report of a survey: each change, each item withheld for hidden text, each server that could not be read. */
export function pinReportText(survey: PinSurvey, colour: boolean): string {
  const { changes, hidden } = survey.comparison
  const name = path.basename(survey.lockFile)
  const lines: string[] = []
  if (!survey.lock) lines.push(`${name}: none yet (${survey.lockFile})`)
  else if (changes.length === 0) lines.push(`${name}: every running server matches it`)
  else lines.push(`${name}: ${changes.length} ${changes.length === 1 ? 'difference' : 'differences'}`)
  if (survey.lock) for (const change of changes) lines.push(changeText(change, colour))
  if (hidden.length > 0) {
    lines.push('withheld for hidden text (never pinned):')
    for (const h of hidden)
      lines.push(`  ${h.kind} ${shown(`${h.server}:${h.name}`)}: ${h.text.map((k) => HIDDEN_TEXT_NAMES[k]).join(', ')}`)
  }
  for (const u of survey.unchecked)
    lines.push(
      `not checked: server ${u.server} is ${u.state.toLowerCase()}${u.error ? `: ${terminalText(u.error)}` : ''}`,
    )
  return `${lines.join('\n')}\n`
}
