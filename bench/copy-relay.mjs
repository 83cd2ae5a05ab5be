// The lowest floor for a relay process, measured beside myc in `npm run bench`:
// it never parses JSON. Bytes from the client go to the child with one string
// replacement (the bench's `echo__echo` becomes `echo`), the child's bytes go
// back as they are (a pipe). What it cannot reach, no relay process on the
// machine can. Usage: node copy-relay.mjs <command> [args...]
import { spawn } from 'node:child_process'

const [command, ...args] = process.argv.slice(2)
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
// Up to the last newline: a name is never split between two reads.
let carry = ''
process.stdin.setEncoding('utf8').on('data', (chunk) => {
  const text = carry + chunk
  const end = text.lastIndexOf('\n') + 1
  carry = text.slice(end)
  if (end > 0) child.stdin.write(text.slice(0, end).replaceAll('"echo__echo"', '"echo"'))
})
process.stdin.on('end', () => child.kill())
child.stdout.pipe(process.stdout)
