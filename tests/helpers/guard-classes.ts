import { describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'

/** One command line and the rule that blocks it, or null when it must stay allowed. */
export type GuardCase = [string, string | null]

/**
 * The guard's verdict on each case of each class, and that every class has
 * blocked commands and the allowed twins that keep the guard honest.
 */
export function describeGuardClasses(title: string, classes: Record<string, GuardCase[]>): void {
  const guard = new ShellGuard()
  describe(title, () => {
    for (const [name, cases] of Object.entries(classes)) {
      describe(name, () => {
        it.each(cases)('%j → %s', async (command, rule) => {
          const verdict = await guard.check(command)
          if (rule === null) expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true })
          else expect(verdict).toMatchObject({ ok: false, error: { rule } })
        })
      })
    }

    it('every class has blocked commands and allowed twins', () => {
      for (const cases of Object.values(classes)) {
        expect(cases.some(([, r]) => r === null)).toBe(true)
        expect(cases.some(([, r]) => r !== null)).toBe(true)
      }
    })
  })
}
