import { createInterface } from 'node:readline/promises'
import { Writable } from 'node:stream'
import { terminalText } from '../terminal-text.js'
import { oneLine } from './answers.js'
import { flagOf, type Slot } from './slots.js'

/**
 * Asks a person on the terminal (the question on stderr, so stdout stays
 * the result's) for a slot's value: its description, choices and default
 * shown; a secret typed without echo. An empty answer takes the default,
 * else asks again. Ctrl-C ends myc as it would anywhere (nothing is written
 * before the questions are done).
 */
export async function askOnTerminal(slot: Slot): Promise<string> {
  const { description, choices, default: fallback, isSecret } = slot.input
  const about = [
    ...(description ? [oneLine(description)] : []),
    ...(choices?.length ? [`one of ${choices.join(', ')}`] : []),
    ...(isSecret ? ['secret: not shown, kept sealed'] : []),
  ]
  const question = terminalText(`${flagOf(slot)}${about.length ? `: ${about.join('; ')}` : ''}\n`)
  const prompt = terminalText(`  value${fallback !== undefined ? ` [${fallback}]` : ''}: `)
  return withTerminal(isSecret === true, async (ask) => {
    process.stderr.write(question)
    for (;;) {
      const answer = (await ask(prompt)).trim()
      if (answer !== '') return answer
      if (fallback !== undefined) return fallback
    }
  })
}

/** Asks the person on the terminal for a secret (the question on stderr, nothing echoed); asks again while the answer is empty. */
export async function askSecretOnTerminal(question: string): Promise<string> {
  return withTerminal(true, async (ask) => {
    for (;;) {
      const answer = await ask(terminalText(question))
      if (answer !== '') return answer
    }
  })
}

/**
 * Runs `use` with the terminal in readline's hands before anything is
 * asked, so that nothing typed after a question shows is echoed by the
 * terminal itself; `hidden`, readline's own echo is swallowed too.
 */
async function withTerminal<T>(
  hidden: boolean,
  use: (ask: (prompt: string) => Promise<string>) => Promise<T>,
): Promise<T> {
  let muted = hidden
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    },
  })
  const rl = createInterface({ input: process.stdin, output, terminal: true })
  rl.on('SIGINT', () => {
    rl.close()
    process.stderr.write('\n')
    process.kill(process.pid, 'SIGINT')
  })
  // Hidden: the prompt goes out beside readline, whose echo (and redraws) are swallowed.
  const ask = async (prompt: string) => {
    if (!hidden) return rl.question(prompt)
    process.stderr.write(prompt)
    const answer = await rl.question('')
    process.stderr.write('\n')
    return answer
  }
  try {
    return await use(ask)
  } finally {
    muted = false
    rl.close()
  }
}
