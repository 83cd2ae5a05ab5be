import { terminalText } from './terminal-text.js'

/** What a live line needs of the stream it is drawn on: a terminal's write and its width. */
export interface LineStream {
  write(text: string): unknown
  readonly isTTY?: boolean
  readonly columns?: number
}

/** One line: its text, and whether a spinner turns before it (work under way) or a mark stands there. */
export interface LiveLine {
  text: string
  /** A mark (✓, ✗) when done; undefined while the work is under way (the spinner). */
  mark?: string
  /** When the work began (epoch ms): from a second on, the line ends with how long it has taken (`(4 s)`). */
  since?: number
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
/** How often the spinner turns. */
const SPIN_MS = 100
const ESC = '\u001b['

/**
 * Lines at the bottom of a terminal that change in place (one per child
 * while children start): each redraw moves the cursor back over them and
 * writes them again, cut to the terminal's width so that none wraps (a
 * wrapped line would throw the count off). What else is written to the
 * terminal meanwhile (a log line) goes through {@link above}: the lines are
 * taken away, it is written, and they come back under it. `close()` takes
 * them away for good. Only for a terminal: see {@link liveLinesWanted}.
 */
export class LiveLines {
  private readonly lines = new Map<string, LiveLine>()
  /** How many lines are on the screen now. */
  private drawn = 0
  private frame = 0
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly stream: LineStream) {}

  /** Adds or changes the line of `key` (lines keep the order they were first set in). */
  set(key: string, line: LiveLine): void {
    if (this.closed) return
    this.lines.set(key, line)
    this.draw()
    this.spin()
  }

  /** Writes what `write` writes (a log line) above the lines, which come back under it. */
  above(write: () => void): void {
    if (this.closed || this.drawn === 0) return write()
    this.erase()
    write()
    this.draw()
  }

  /** Takes the lines away and stops the spinner; later calls change nothing. */
  close(): void {
    if (this.closed) return
    clearInterval(this.timer)
    this.erase()
    this.closed = true
  }

  /** Turns the spinner while a line is under way; stops when none is. */
  private spin(): void {
    const busy = [...this.lines.values()].some((l) => l.mark === undefined)
    if (busy && this.timer === undefined) {
      this.timer = setInterval(() => {
        this.frame = (this.frame + 1) % SPINNER.length
        this.draw()
      }, SPIN_MS)
      // The lines never keep the process alive.
      this.timer.unref()
    } else if (!busy && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  /** Clears the lines one by one, bottom up, and leaves the cursor where the first was (not `ESC [J`: a terminal may keep what a clear of the whole screen took away in its history, as tmux does). */
  private erase(): void {
    if (this.drawn === 0) return
    this.stream.write(`\r${`${ESC}1A${ESC}2K`.repeat(this.drawn)}`)
    this.drawn = 0
  }

  private draw(): void {
    const width = Math.max(20, (this.stream.columns ?? 80) - 1)
    const now = Date.now()
    const text = [...this.lines.values()].map((line) => {
      const mark = line.mark ?? SPINNER[this.frame]!
      const took = line.mark === undefined && line.since !== undefined ? Math.floor((now - line.since) / 1_000) : 0
      const body = `${terminalText(line.text).replace(/[\t\n]/g, ' ')}${took > 0 ? ` (${took} s)` : ''}`
      return `${mark} ${cut(body, width - 2)}`
    })
    const back = this.drawn > 0 ? `${ESC}${this.drawn}A\r` : ''
    this.stream.write(`${back}${text.map((l) => `${ESC}2K${l}\n`).join('')}`)
    this.drawn = text.length
  }
}

/** `text` cut to `width` characters, with an ellipsis when cut. */
function cut(text: string, width: number): string {
  const chars = [...text]
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`
}

/**
 * Whether live lines may be drawn on `stream`: a terminal that moves its
 * cursor (not `TERM=dumb`), and the command's output is for a person (not
 * `--json`).
 */
export function liveLinesWanted(
  stream: LineStream,
  env: Readonly<Record<string, string | undefined>>,
  options: { json?: boolean } = {},
): boolean {
  return stream.isTTY === true && env.TERM !== 'dumb' && options.json !== true
}
