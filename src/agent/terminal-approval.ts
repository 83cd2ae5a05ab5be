import { createInterface } from 'node:readline/promises'
import { jsonText, terminalText } from '../terminal-text.js'
import type { RiskLevel } from './risk.js'

/** What a person answers to an approval prompt; `cancelled`: they pressed Ctrl-C instead of answering. */
export type ApprovalAnswer = 'yes' | 'no' | 'always' | 'never' | 'cancelled'

/** Asks a person on the terminal; absent when there is none. */
export type AskPerson = (question: {
  tool: string
  risk: RiskLevel
  input: Record<string, unknown>
}) => Promise<ApprovalAnswer>

/** What a person may type to an approval question. */
export const APPROVAL_ANSWERS: ReadonlyMap<string, ApprovalAnswer> = new Map<string, ApprovalAnswer>([
  ['y', 'yes'],
  ['yes', 'yes'],
  ['n', 'no'],
  ['no', 'no'],
  ['a', 'always'],
  ['always', 'always'],
  ['v', 'never'],
  ['never', 'never'],
])

/** Asks on the terminal (stderr, so stdout stays the result's): y / n / always / never; anything else asks again. */
export const askOnTerminal: AskPerson = async ({ tool, risk, input }) => {
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    for (;;) {
      const reply = (
        await rl.question(
          terminalText(
            `Allow ${tool} (${risk} risk) with ${jsonText(input).slice(0, 200)}? [y]es / [n]o / [a]lways / ne[v]er: `,
          ),
        )
      )
        .trim()
        .toLowerCase()
      const answer = APPROVAL_ANSWERS.get(reply)
      if (answer) return answer
    }
  } finally {
    rl.close()
  }
}

/** A yes/no question on the terminal (stderr). */
export async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    for (;;) {
      const reply = (await rl.question(terminalText(`${question} [y/n]: `))).trim().toLowerCase()
      if (reply === 'y' || reply === 'yes') return true
      if (reply === 'n' || reply === 'no') return false
    }
  } finally {
    rl.close()
  }
}
