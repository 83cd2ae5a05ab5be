/** Restart limits for one child (config `restart`). */
export interface BackoffPolicy {
  maxRetries: number
  initialDelayMs: number
  maxDelayMs: number
}

/**
 * Delay before restart number `attempt` (0-based): exponential, capped, with
 * "equal jitter" (half fixed, half random) so that children that crashed
 * together do not all come back in the same millisecond. Returns undefined
 * when the retries are used up. `random` is injectable for tests.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxRetries) return undefined
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}
