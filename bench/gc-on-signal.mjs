// Loaded into a myc the bench starts (`--expose-gc --import`), for the
// sessions-at-scale case: SIGUSR2 runs a full garbage collection, so that
// the memory read after it is what the sessions hold, not what V8's memory
// reducer has or has not given back yet (without it, 8 runs over four
// commits gave 15.6-15.9 or 26.9-31.7 KiB a session, as the reducer ran
// within the 45 s wait or not, both at one commit; with it, 19.5-24.3).
process.on('SIGUSR2', () => {
  globalThis.gc?.()
})
