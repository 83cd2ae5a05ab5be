import type { GuardOptions } from './paths.js'
import type { SimpleCommand } from './shell-words.js'

/** One rule of the guard's table: an id, what it blocks in words, and the test on one command. */
export interface GuardRule {
  id: string
  message: string
  test: (cmd: SimpleCommand, opts: GuardOptions) => boolean
}
