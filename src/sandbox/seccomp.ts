/**
 * A seccomp filter (classic BPF, as bubblewrap's `--seccomp FD` reads it)
 * that lets a process make threads but no other process: `clone` only with
 * CLONE_THREAD, `clone3` answered ENOSYS (so the C library falls back to
 * `clone`, which is then judged), `fork` and `vfork` refused with EPERM.
 * A call of another architecture (an i386 `int 0x80`) kills the process, and
 * an x32 system call number is answered ENOSYS, so neither gets around the
 * checks. Without new processes a fork bomb makes none, and nothing can be
 * left running when the one process ends.
 */

/** Linux system call numbers the filter judges, per architecture (`process.arch`). */
interface ArchCalls {
  /** AUDIT_ARCH_* of seccomp_data.arch. */
  audit: number
  clone: number
  clone3: number
  /** Absent where the architecture has none (arm64 makes processes with clone only). */
  fork?: number
  vfork?: number
  /** Numbers at or above this one belong to another ABI on the same architecture (x32). */
  abiBit?: number
}

const ARCHES: Record<string, ArchCalls> = {
  x64: { audit: 0xc000003e, clone: 56, clone3: 435, fork: 57, vfork: 58, abiBit: 0x40000000 },
  arm64: { audit: 0xc00000b7, clone: 220, clone3: 435 },
}

const CLONE_THREAD = 0x00010000
const EPERM = 1
const ENOSYS = 38

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const JSET_K = 0x45
const RET_K = 0x06
const RET_ALLOW = 0x7fff0000
const RET_ERRNO = 0x00050000
const RET_KILL_PROCESS = 0x80000000

/** Offsets into struct seccomp_data: nr, arch, then args[0] (its low 32 bits on a little-endian machine). */
const NR = 0
const ARCH = 4
const ARG0_LOW = 16

/** The architectures the filter knows; code mode is not offered on any other. */
export function seccompArches(): readonly string[] {
  return Object.keys(ARCHES)
}

type Jump = number | 'allow' | 'eperm' | 'enosys' | 'kill'
interface Step {
  code: number
  k: number
  jt?: Jump
  jf?: Jump
}

/** The filter for `arch` (`process.arch`), as the bytes of its sock_filter array; undefined for an architecture it does not know. */
export function noNewProcessesFilter(arch: string = process.arch): Buffer | undefined {
  const calls = ARCHES[arch]
  if (!calls) return undefined
  const steps: Step[] = [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: calls.audit, jf: 'kill' },
    { code: LD_W_ABS, k: NR },
    ...(calls.abiBit !== undefined ? [{ code: JGE_K, k: calls.abiBit, jt: 'enosys' as const }] : []),
    { code: JEQ_K, k: calls.clone3, jt: 'enosys' },
    ...[calls.fork, calls.vfork].flatMap((nr) =>
      nr === undefined ? [] : [{ code: JEQ_K, k: nr, jt: 'eperm' as const }],
    ),
    { code: JEQ_K, k: calls.clone, jf: 'allow' },
    { code: LD_W_ABS, k: ARG0_LOW },
    { code: JSET_K, k: CLONE_THREAD, jt: 'allow', jf: 'eperm' },
  ]
  const ends: Record<Exclude<Jump, number>, number> = {
    allow: RET_ALLOW,
    eperm: RET_ERRNO | EPERM,
    enosys: RET_ERRNO | ENOSYS,
    kill: RET_KILL_PROCESS,
  }
  const labels = Object.keys(ends) as Array<keyof typeof ends>
  const at = (label: keyof typeof ends) => steps.length + labels.indexOf(label)
  const buffer = Buffer.alloc((steps.length + labels.length) * 8)
  const write = (i: number, code: number, jt: number, jf: number, k: number) => {
    buffer.writeUInt16LE(code, i * 8)
    buffer.writeUInt8(jt, i * 8 + 2)
    buffer.writeUInt8(jf, i * 8 + 3)
    buffer.writeUInt32LE(k >>> 0, i * 8 + 4)
  }
  // A jump's offset counts from the instruction after it.
  const offset = (i: number, to: Jump | undefined) =>
    to === undefined ? 0 : (typeof to === 'number' ? to : at(to)) - i - 1
  steps.forEach((s, i) => write(i, s.code, offset(i, s.jt), offset(i, s.jf), s.k))
  labels.forEach((label, j) => write(steps.length + j, RET_K, 0, 0, ends[label]))
  return buffer
}
