/**
 * Waiting in tests, without fixed sleeps. A test that waits for something
 * (a process to start, a file to be written, a message to arrive) polls for
 * it with `waitFor`, which returns as soon as it holds and names what never
 * came when the deadline passes. A test that asserts something does NOT
 * happen keeps a window of time for it to (not) happen: `quietWindow`, with a
 * comment saying what must not happen meanwhile.
 */

/** Polls until `check` returns true, or fails after `ms`, naming `what` it waited for. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  if (await check()) return
  throw new Error(`timed out after ${ms} ms waiting for ${what}`)
}

/** Lets `ms` pass so that something that must NOT happen would have had its chance to. */
export function quietWindow(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}
