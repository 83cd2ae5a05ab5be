/** Makes `total` calls, `concurrency` of them in flight at any time; resolves when all are answered. */
export async function callsInFlight(total: number, concurrency: number, call: () => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++
        await call()
      }
    }),
  )
}
