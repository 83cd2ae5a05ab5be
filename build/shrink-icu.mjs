// English-only ICU data in a built Linux executable, as Node's `small-icu`
// build has it: 19 MB off the official linux binaries' 33 MB of full ICU data
// (`icudt<N>_dat`, in the middle of their read-only segment). The package is
// rewritten in place with only English locale bundles (build/icu-data.mjs),
// and the file pages it no longer fills are cut out: the segment that held
// it becomes two LOAD segments at the same addresses, the second one read
// from an earlier file offset, so no code or data moves in memory. Every
// later file offset (segments, sections, the section table) moves down by
// the cut. Runs on the executable postject made (see placeTable).
import { englishOnly } from './icu-data.mjs'

const PT_LOAD = 1
const PT_PHDR = 6
const PHDR_SIZE = 56

function fail(message) {
  throw new Error(`shrink ICU: ${message}`)
}

const u64 = (buf, at) => Number(buf.readBigUInt64LE(at))
const set64 = (buf, at, value) => buf.writeBigUInt64LE(BigInt(value), at)

function checkElf(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) fail('not a little-endian 64-bit ELF file')
}

function sections(buf) {
  const shoff = u64(buf, 0x28)
  const list = []
  for (let i = 0; i < buf.readUInt16LE(0x3c); i++) {
    const at = shoff + i * buf.readUInt16LE(0x3a)
    list.push({ at, type: buf.readUInt32LE(at + 4), addr: u64(buf, at + 16), offset: u64(buf, at + 24), size: u64(buf, at + 32), link: buf.readUInt32LE(at + 40) })
  }
  return list
}

/**
 * Where ICU's data is in a Node binary that still has its symbol table (the
 * official base before stripping): the address and size of `icudt<N>_dat`.
 */
export function findIcuSymbol(base) {
  checkElf(base)
  const all = sections(base)
  const symtab = all.find((s) => s.type === 2)
  if (!symtab) fail('the base has no symbol table (give the binary before `strip`)')
  const strtab = all[symtab.link]
  for (let at = symtab.offset; at < symtab.offset + symtab.size; at += 24) {
    const nameAt = strtab.offset + base.readUInt32LE(at)
    const name = base.toString('latin1', nameAt, base.indexOf(0, nameAt))
    if (/^icudt\d+_dat$/.test(name)) return { name, addr: u64(base, at + 8), size: u64(base, at + 16) }
  }
  fail('no icudt<N>_dat symbol: this Node has no built-in full ICU data')
}

function programHeaders(buf) {
  const phoff = u64(buf, 0x20)
  const list = []
  for (let i = 0; i < buf.readUInt16LE(0x38); i++) {
    const at = phoff + i * PHDR_SIZE
    list.push({ type: buf.readUInt32LE(at), flags: buf.readUInt32LE(at + 4), offset: u64(buf, at + 8), vaddr: u64(buf, at + 16), filesz: u64(buf, at + 32), memsz: u64(buf, at + 40), align: u64(buf, at + 48) })
  }
  return list
}

/**
 * Where the program header table goes, one entry longer. The kernel (before
 * Linux 5.18, and qemu-user) and ld.so find it at the first LOAD's
 * address plus e_phoff, so it must stay where that segment maps it. Where
 * it is, when that is before the ICU data and has room (x64: LIEF left room
 * at the end of the first segment); else in the space the English package
 * frees, when the ICU data is in the first segment (arm64, whose table LIEF
 * put past the cut).
 */
function placeTable(list, load, icu, packageEnd) {
  const size = (list.length + 1) * PHDR_SIZE
  const table = list.find((p) => p.type === PT_PHDR)
  const first = list.find((p) => p.type === PT_LOAD)
  if (table && table.filesz >= size && table.offset + table.filesz <= load.offset + (icu.addr - load.vaddr)) return { offset: table.offset, vaddr: table.vaddr, size: table.filesz }
  if (first !== load) fail('no room for the program header table where the kernel looks for it (run it on the executable postject wrote)')
  const vaddr = Math.ceil(packageEnd / 8) * 8
  return { offset: load.offset + (vaddr - load.vaddr), vaddr, size }
}

function writeProgramHeaders(buf, list, table) {
  list.forEach((p, i) => {
    const at = table.offset + i * PHDR_SIZE
    const entry = p.type === PT_PHDR ? { ...p, offset: table.offset, vaddr: table.vaddr, filesz: table.size, memsz: table.size } : p
    buf.writeUInt32LE(entry.type, at)
    buf.writeUInt32LE(entry.flags, at + 4)
    set64(buf, at + 8, entry.offset)
    set64(buf, at + 16, entry.vaddr)
    set64(buf, at + 24, entry.vaddr)
    set64(buf, at + 32, entry.filesz)
    set64(buf, at + 40, entry.memsz)
    set64(buf, at + 48, entry.align)
  })
  set64(buf, 0x20, table.offset)
  buf.writeUInt16LE(list.length, 0x38)
}

/** The segments with the cut [cutStart, cutEnd) (addresses) taken out of the one holding it; file offsets after it move down. */
function splitSegments(list, icu, cutStart, cutEnd) {
  const index = list.findIndex((p) => p.type === PT_LOAD && p.vaddr <= icu.addr && icu.addr + icu.size <= p.vaddr + p.filesz)
  if (index < 0) fail(`no LOAD segment holds ${icu.name} at 0x${icu.addr.toString(16)}`)
  const load = list[index]
  const fileCutStart = load.offset + (cutStart - load.vaddr)
  const fileCutEnd = load.offset + (cutEnd - load.vaddr)
  const delta = cutEnd - cutStart
  const moved = list.map((p) => {
    if (p === load) return { ...p, filesz: cutStart - p.vaddr, memsz: cutStart - p.vaddr }
    if (p.offset >= fileCutEnd) return { ...p, offset: p.offset - delta }
    if (p.filesz > 0 && p.offset + p.filesz > fileCutStart) fail(`a segment (type ${p.type}) overlaps the cut`)
    return p
  })
  const second = { ...load, offset: fileCutStart, vaddr: cutEnd, filesz: load.filesz - (cutEnd - load.vaddr), memsz: load.memsz - (cutEnd - load.vaddr) }
  moved.splice(index + 1, 0, second)
  return { list: moved, fileCutStart, fileCutEnd, delta }
}

/** Offsets of sections and of the section table after the cut move down; the section that spans it ends at it. */
function moveSections(buf, cut) {
  for (const s of sections(buf)) {
    if (s.offset >= cut.fileCutEnd) set64(buf, s.at + 24, s.offset - cut.delta)
    else if (s.type !== 8 && s.offset < cut.fileCutStart && s.offset + s.size > cut.fileCutStart) set64(buf, s.at + 32, cut.fileCutStart - s.offset)
  }
  const shoff = u64(buf, 0x28)
  if (shoff >= cut.fileCutEnd) set64(buf, 0x28, shoff - cut.delta)
}

/**
 * The executable `exe` with English-only ICU data; `icu` is findIcuSymbol()
 * of its base. Returns the new file and what was kept.
 */
export function shrinkIcu(exe, icu, filter = englishOnly) {
  checkElf(exe)
  const out = Buffer.from(exe)
  const list = programHeaders(out)
  const load = list.find((p) => p.type === PT_LOAD && p.vaddr <= icu.addr && icu.addr < p.vaddr + p.filesz)
  if (!load) fail(`no LOAD segment holds ${icu.name} at 0x${icu.addr.toString(16)}`)
  // The cut keeps to the segment's alignment (4 KiB on x64; a 64 KiB-page arm64 kernel needs its 64 KiB).
  const page = Math.max(load.align, 0x1000)
  const at = load.offset + (icu.addr - load.vaddr)
  const small = filter(out.subarray(at, at + icu.size))
  const table = placeTable(list, load, icu, icu.addr + small.data.length)
  const cutStart = Math.ceil(Math.max(icu.addr + small.data.length, table.vaddr + table.size) / page) * page
  const cutEnd = Math.floor((icu.addr + icu.size) / page) * page
  if (cutEnd <= cutStart) fail('nothing to cut')
  out.fill(0, at, at + icu.size)
  small.data.copy(out, at)
  const cut = splitSegments(list, icu, cutStart, cutEnd)
  moveSections(out, cut)
  writeProgramHeaders(out, cut.list, table)
  const file = Buffer.concat([out.subarray(0, cut.fileCutStart), out.subarray(cut.fileCutEnd)])
  return { file, saved: cut.delta, items: small.items, kept: small.kept }
}
