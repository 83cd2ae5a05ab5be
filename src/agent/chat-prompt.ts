import { createInterface, type Completer, type Interface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { forStream } from '../terminal-colour.js'
import { terminalText } from '../terminal-text.js'
import { HISTORY_LINES, writeHistory } from './chat-line.js'

/** The chat's streams, and whether a person is at a terminal on both ends. */
export interface ChatIo {
  input: Readable & { isTTY?: boolean }
  output: Writable & { isTTY?: boolean }
  errors: Writable
  interactive: boolean
  env: Record<string, string | undefined>
  /** A line on stderr: everything said here may quote a skill, a tool, a memory, a chat record or an error from a child: controls are shown, never obeyed. */
  say(text: string): void
}

/**
 * The chat's prompt: the one reader of the chat's input (a second reader on
 * the terminal would fight it for keystrokes), with history and completion on
 * a terminal. It asks the chat's questions, shows the status line, and hears
 * Ctrl-C (the turn in progress ends; twice at an empty prompt, the chat) and
 * Ctrl-L (a clear screen).
 */
export class ChatPrompt {
  readonly rl: Interface
  /** The lines typed or piped: they queue from the start, so awaits before the loop lose none of stdin's. */
  readonly lines: AsyncIterableIterator<string>
  /** The turn in progress: Ctrl-C aborts it, and a question open in it is cancelled with it. */
  turn: AbortController | undefined
  /** Ctrl-C twice at an empty prompt closed the prompt: the chat ends once what runs now is over. */
  closing = false
  /** Ctrl-C at an empty prompt asks for a second one; anything typed in between starts the count again. */
  private emptyInterrupts = 0
  private shownStatus = ''

  constructor(
    private readonly io: ChatIo,
    history: string[],
    completer: Completer | undefined,
    /** The status line as it is now (agent/chat-line.ts). */
    private readonly status: () => string,
  ) {
    this.rl = createInterface({
      input: io.input,
      output: io.output,
      terminal: io.interactive,
      historySize: HISTORY_LINES,
      history,
      ...(completer ? { completer } : {}),
    })
    this.lines = this.rl[Symbol.asyncIterator]()
    this.rl.setPrompt('myc> ')
  }

  /** The prompt again, on a terminal (piped, there is none). */
  show(): void {
    if (this.io.interactive) this.rl.prompt()
  }

  /** A line was read: Ctrl-C's count starts again. */
  heard(): void {
    this.emptyInterrupts = 0
  }

  /** The status line: on a terminal only, at the start, after every reply, and after a command that changed it. */
  showStatus(onlyIfChanged = false): void {
    if (!this.io.interactive) return
    const line = this.status()
    if (onlyIfChanged && line === this.shownStatus) return
    this.shownStatus = line
    this.io.output.write(`${forStream(this.io.output, `${DIM}${terminalText(line)}${UNDIM}`, this.io.env)}\n`)
  }

  /**
   * Asks through this prompt. Ctrl-C while a question is open ends the turn;
   * the question is then cancelled (undefined).
   */
  question(q: string): Promise<string | undefined> {
    return new Promise<string | undefined>((resolve) => {
      const signal = this.turn?.signal
      if (signal?.aborted) return resolve(undefined)
      signal?.addEventListener('abort', () => resolve(undefined), { once: true })
      // A child's elicitation and an approval quote what children and the model wrote.
      this.rl.question(terminalText(q), signal ? { signal } : {}, resolve)
    })
  }

  /** A yes/no question, asked until answered; cancelled counts as "no". */
  readonly yesNo = async (q: string): Promise<boolean> => {
    for (;;) {
      const a = (await this.question(`${q} [y/n]: `))?.trim().toLowerCase() ?? 'n'
      if (a === 'y' || a === 'yes') return true
      if (a === 'n' || a === 'no') return false
    }
  }

  /** From now on Ctrl-C and (on a terminal) Ctrl-L are the chat's. */
  listen(): void {
    this.rl.on('SIGINT', this.onInterrupt)
    if (this.io.interactive) this.io.input.on('keypress', this.onKeypress)
  }

  private readonly onInterrupt = (): void => {
    const { rl } = this
    if (this.turn) {
      this.turn.abort('interrupted by the user')
      return
    }
    if (rl.line !== '') this.emptyInterrupts = 0
    else if (++this.emptyInterrupts >= 2) {
      this.closing = true
      rl.close()
      return
    }
    // Off the prompt's line (it stays, like a shell's ^C), then a fresh prompt.
    this.io.say(rl.line === '' ? '\n(press Ctrl-C again to exit; Ctrl-D or /quit also leave)' : '')
    rl.write(null, { ctrl: true, name: 'u' })
    rl.prompt()
  }

  // Readline emits keypress events on a terminal's input: its own listener (which raises SIGINT) runs first.
  private readonly onKeypress = (
    _text: string | undefined,
    key: { name?: string; ctrl?: boolean } | undefined,
  ): void => {
    if (!(key?.ctrl === true && key.name === 'c')) this.emptyInterrupts = 0
    // Ctrl-L at the prompt: a clear screen with the status line and the prompt (what was typed kept) at its top.
    if (key?.ctrl === true && key.name === 'l' && this.turn === undefined) {
      this.io.output.write('\u001b[H\u001b[2J')
      this.showStatus()
      this.rl.prompt(true)
    }
  }

  /** The chat is over: the prompt closes, and on a terminal the history is kept for the next chat. */
  end(historyFile: string): void {
    this.rl.close()
    this.io.input.off('keypress', this.onKeypress)
    if (this.io.interactive) writeHistory(historyFile, (this.rl as unknown as { history: string[] }).history)
  }

  close(): void {
    this.rl.close()
  }
}

const DIM = '\u001b[2m'
const UNDIM = '\u001b[22m'
