/**
 * Size and memory (`npm run bench`, or `--only footprint`): the host's
 * single executable against its size target, and the resident memory of an
 * idle `myc serve` with one child, from the executable and from the bundle
 * under this Node, against the memory target. Linux only for the memory
 * (it reads /proc); an executable that was not built is reported absent.
 */
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

const MIB = 1024 * 1024
/** The targets of issue 36: in MiB, as `ls -lh` and `ps` count them. */
export const SIZE_TARGET_MIB = 100
export const IDLE_RSS_TARGET_MIB = 60
/**
 * When resident memory is read: just after start-up, and once V8's memory reducer has given back what
 * start-up left behind (it runs only after a full GC, which the child's pings bring on: 20–40 s after
 * start in runs here).
 */
const SETTLE_S = [3, 60] as const

interface IdleRss {
  label: string
  /** VmRSS in MiB, SETTLE_S[0] s and SETTLE_S[1] s after the client listed the tools; anon and file parts of the later one. */
  afterStart: number
  idle: number
  idleAnon: number
  idleFile: number
}

export interface Footprint {
  executable: { file: string; mib: number; target: number; met: boolean; olderThanBundle: boolean } | { absent: string }
  idleRss: IdleRss[] | { absent: string }
  target: number
  met: boolean | undefined
}

function hostExecutable(root: string): string {
  const os = process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'win' : 'linux'
  return path.join(root, 'build', 'bin', `myc-${os}-${process.arch}${os === 'win' ? '.exe' : ''}`)
}

/** VmRSS, RssAnon and RssFile of a process, in MiB. */
function residentMiB(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 }
}

/**
 * Drops a file's pages from the page cache (GNU dd, `iflag=nocache`): once the kernel has gathered
 * an executable's text into huge pages (FileHugePages, seen here after a few runs), each run maps
 * them whole and its RssFile grows by ~20 MB that are not myc's. Best effort: without GNU dd the
 * figure may carry them, which the file part of the row shows.
 */
function dropFromPageCache(file: string): void {
  // Pages not yet written back (an executable built a moment ago) cannot be dropped: write them first.
  const fd = openSync(file, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' })
}

const sleep = (s: number) => new Promise((resolve) => setTimeout(resolve, s * 1000))

/** One idle `myc serve`: started by `argv`, connected, its tools listed, then left alone. */
async function idleServe(label: string, argv: string[], config: string, env: Record<string, string>): Promise<IdleRss> {
  const transport = new StdioClientTransport({
    command: argv[0]!,
    args: [...argv.slice(1), 'serve', '--config', config],
    env,
    stderr: 'ignore',
  })
  const client = new Client({ name: 'bench-footprint', version: '1' })
  await client.connect(transport)
  try {
    await client.listTools()
    await sleep(SETTLE_S[0])
    const afterStart = residentMiB(transport.pid!).rss
    await sleep(SETTLE_S[1] - SETTLE_S[0])
    const idle = residentMiB(transport.pid!)
    return { label, afterStart, idle: idle.rss, idleAnon: idle.anon, idleFile: idle.file }
  } finally {
    await client.close()
  }
}

function executableSize(root: string, bundle: string): Footprint['executable'] {
  const file = hostExecutable(root)
  if (!existsSync(file)) return { absent: `${path.relative(root, file)} not built (npm run build:bin)` }
  const mib = statSync(file).size / MIB
  const olderThanBundle = statSync(file).mtimeMs < statSync(bundle).mtimeMs
  return { file: path.relative(root, file), mib, target: SIZE_TARGET_MIB, met: mib <= SIZE_TARGET_MIB, olderThanBundle }
}

/** The executable's size, and the idle memory of the executable and of the bundle under this Node, measured side by side. */
export async function footprint(options: {
  root: string
  bundle: string
  config: string
  env: Record<string, string>
}): Promise<Footprint> {
  const launcher = path.join(options.root, 'build', 'myc.cjs')
  const executable = executableSize(options.root, options.bundle)
  let idleRss: Footprint['idleRss'] = { absent: 'resident memory is read from /proc (Linux only)' }
  if (process.platform === 'linux') {
    const sides: Array<[string, string[]]> = [[`node ${process.version} build/myc.cjs`, [process.execPath, launcher]]]
    if ('file' in executable) {
      sides.unshift([executable.file, [path.join(options.root, executable.file)]])
      dropFromPageCache(path.join(options.root, executable.file))
    }
    idleRss = await Promise.all(sides.map(([label, argv]) => idleServe(label, argv, options.config, options.env)))
  }
  const exeRss = Array.isArray(idleRss) && 'file' in executable ? idleRss[0]!.idle : undefined
  return {
    executable,
    idleRss,
    target: IDLE_RSS_TARGET_MIB,
    met: exeRss === undefined ? undefined : exeRss <= IDLE_RSS_TARGET_MIB,
  }
}

/** The rows of the bench table. */
export function footprintRows(f: Footprint): string[][] {
  const rows: string[][] = []
  const e = f.executable
  if ('absent' in e) rows.push(['executable size', '', e.absent, '', `≤ ${SIZE_TARGET_MIB} MiB`])
  else
    rows.push([
      `executable size (${e.file}${e.olderThanBundle ? ', older than the bundle' : ''})`,
      '',
      `${e.mib.toFixed(1)} MiB`,
      '',
      `≤ ${SIZE_TARGET_MIB} MiB ${e.met ? 'met' : 'MISSED'}`,
    ])
  if (!Array.isArray(f.idleRss)) rows.push(['myc serve, one child, idle: VmRSS', '', f.idleRss.absent, '', ''])
  else
    for (const r of f.idleRss)
      rows.push([
        `myc serve, one child: VmRSS ${SETTLE_S[0]} s / ${SETTLE_S[1]} s after start (MiB), ${r.label}`,
        '',
        `${r.afterStart.toFixed(1)} / ${r.idle.toFixed(1)}`,
        '',
        r === f.idleRss[0] && 'file' in e ? `≤ ${IDLE_RSS_TARGET_MIB} MiB idle ${f.met ? 'met' : 'MISSED'}` : '',
      ])
  return rows
}
