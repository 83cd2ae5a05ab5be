// Loaded into a myc the bench starts (`--import`), for the 10 MiB case: how
// long its event loop was held. The first SIGUSR2 starts the measure, the
// second writes it to MYC_BENCH_LOOP_FILE ({ p99Ms, maxMs }): a call that
// arrives while one turn runs waits for that turn.
import { renameSync, writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const file = process.env.MYC_BENCH_LOOP_FILE
if (file) {
  const delays = monitorEventLoopDelay({ resolution: 1 })
  let measuring = false
  process.on('SIGUSR2', () => {
    if (!measuring) {
      measuring = true
      delays.reset()
      delays.enable()
      return
    }
    delays.disable()
    // Written whole under another name, then renamed: the bench reads the file as soon as it exists.
    writeFileSync(`${file}.part`, JSON.stringify({ p99Ms: delays.percentile(99) / 1e6, maxMs: delays.max / 1e6 }))
    renameSync(`${file}.part`, file)
  })
}
