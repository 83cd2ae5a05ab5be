import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/fixtures.js'

interface Item {
  name: string
  data: Buffer
}
const icuData = (await import(path.join(repoRoot, 'build', 'icu-data.mjs'))) as {
  readIcuPackage: (buf: Buffer) => { header: Buffer; items: Item[] }
  writeIcuPackage: (header: Buffer, items: Item[]) => Buffer
  isLocaleBundle: (name: string) => boolean
  englishOnly: (buf: Buffer) => { data: Buffer; items: number; kept: number }
}
const shrink = (await import(path.join(repoRoot, 'build', 'shrink-icu.mjs'))) as {
  findIcuSymbol: (base: Buffer) => { name: string; addr: number; size: number }
  shrinkIcu: (exe: Buffer, icu: { name: string; addr: number; size: number }) => unknown
}

/** The data header of an ICU package of the given format, as ICU writes it (headerSize 32, little-endian). */
function header(format = 'CmnD'): Buffer {
  const h = Buffer.alloc(32)
  h.writeUInt16LE(32, 0)
  h[2] = 0xda
  h[3] = 0x27
  h.writeUInt16LE(20, 4)
  h.write(format, 12, 'latin1')
  h[16] = 1
  return h
}

const item = (name: string, text: string): Item => ({ name: `icudt78l/${name}`, data: Buffer.from(text) })

describe('ICU data packages (build/icu-data.mjs)', () => {
  it('refuses what is not a little-endian common data package, saying what it found', () => {
    expect(() => icuData.readIcuPackage(Buffer.from('not ICU data at all, just some text'))).toThrow(
      /ICU data: no ICU data header \(magic 0xda 0x27\)/,
    )
    expect(() => icuData.readIcuPackage(Buffer.concat([header('ResB'), Buffer.alloc(16)]))).toThrow(
      /data format "ResB", not a common data package \("CmnD"\)/,
    )
    const big = Buffer.concat([header(), Buffer.alloc(16)])
    big[8] = 1
    expect(() => icuData.readIcuPackage(big)).toThrow(/big-endian/)
    const short = Buffer.concat([header(), Buffer.alloc(8)])
    short.writeUInt32LE(1000, 32)
    expect(() => icuData.readIcuPackage(short)).toThrow(/a table of 1000 items does not fit in 40 bytes/)
  })

  it('writes items sorted by name, each on 16 bytes, and reads them back unchanged', () => {
    const items = [item('zoneinfo64.res', 'zones'), item('en.res', 'english!'), item('coll/root.res', 'r')]
    const buf = icuData.writeIcuPackage(header(), items)
    const back = icuData.readIcuPackage(buf)
    expect(back.header).toEqual(header())
    expect(back.items.map((i) => i.name)).toEqual([
      'icudt78l/coll/root.res',
      'icudt78l/en.res',
      'icudt78l/zoneinfo64.res',
    ])
    // Each item keeps its bytes, padded with zeros to 16.
    expect(back.items.map((i) => i.data.subarray(0, 8).toString().replace(/\0+$/, ''))).toEqual([
      'r',
      'english!',
      'zones',
    ])
    for (let i = 0; i < 3; i++) expect(buf.readUInt32LE(32 + 8 + i * 8) % 16).toBe(0)
    expect(icuData.writeIcuPackage(back.header, back.items)).toEqual(buf)
  })

  it('tells locale bundles from shared data', () => {
    for (const name of ['af.res', 'coll/de_AT.res', 'coll/de__PHONEBOOK.res', 'sr_Latn_BA.res', 'zone/en_150.res'])
      expect(icuData.isLocaleBundle(`icudt78l/${name}`), name).toBe(true)
    for (const name of [
      'root.res',
      'pool.res',
      'res_index.res',
      'coll/res_index.res',
      'zoneinfo64.res',
      'ibm-37_P100-1995.cnv',
      'brkitr/sent_el.brk',
    ])
      expect(icuData.isLocaleBundle(`icudt78l/${name}`), name).toBe(false)
  })

  it('keeps English, the root and every shared item; drops the other languages', () => {
    const names = [
      'af.res',
      'de.res',
      'coll/de__PHONEBOOK.res',
      'en.res',
      'en_GB.res',
      'coll/en.res',
      'root.res',
      'pool.res',
      'res_index.res',
      'zoneinfo64.res',
      'ibm-37_P100-1995.cnv',
      'brkitr/line.brk',
    ]
    const small = icuData.englishOnly(
      icuData.writeIcuPackage(
        header(),
        names.map((n) => item(n, n)),
      ),
    )
    expect(small).toMatchObject({ items: 12, kept: 9 })
    expect(icuData.readIcuPackage(small.data).items.map((i) => i.name.replace('icudt78l/', ''))).toEqual([
      'brkitr/line.brk',
      'coll/en.res',
      'en.res',
      'en_GB.res',
      'ibm-37_P100-1995.cnv',
      'pool.res',
      'res_index.res',
      'root.res',
      'zoneinfo64.res',
    ])
  })
})

const PAGE = 0x1000
const BASE = 0x400000

interface Layout {
  /** Entries the program header table has room for. */
  room: number
  /** The table in the last page (where LIEF puts it in the arm64 executable), not after the ELF header. */
  tableAtEnd?: boolean
  /** The ICU data in a LOAD segment of its own, mapped 1 MiB higher than the first (as on x64). */
  ownSegment?: boolean
}

/**
 * A small ELF file as the build meets it: PT_PHDR, one R LOAD of the whole
 * file (or two), an ICU package at its second page holding a big German
 * bundle, and a page marked TAIL after it. No sections, like a stripped file.
 */
function elfWithIcu({ room, tableAtEnd = false, ownSegment = false }: Layout) {
  const pkg = icuData.writeIcuPackage(header(), [
    item('de.res', 'x'.repeat(5 * PAGE)),
    item('en.res', 'hello'),
    item('root.res', 'r'),
  ])
  const tail = Math.ceil((PAGE + pkg.length) / PAGE) * PAGE
  const file = Buffer.alloc(tail + PAGE)
  const phoff = tableAtEnd ? tail + 64 : 64
  const shift = ownSegment ? 0x100000 : 0
  file.writeUInt32BE(0x7f454c46, 0)
  file[4] = 2
  file[5] = 1
  file.writeBigUInt64LE(BigInt(phoff), 0x20)
  file.writeUInt16LE(56, 0x36)
  const phdr = (i: number, type: number, offset: number, vaddr: number, size: number, align: number) => {
    const at = phoff + i * 56
    file.writeUInt32LE(type, at)
    file.writeUInt32LE(4, at + 4)
    for (const [k, v] of [offset, vaddr, vaddr, size, size, align].entries())
      file.writeBigUInt64LE(BigInt(v), at + 8 + k * 8)
  }
  phdr(0, 6, phoff, BASE + phoff, room * 56, 8)
  if (ownSegment) {
    phdr(1, 1, 0, BASE, PAGE, PAGE)
    phdr(2, 1, PAGE, BASE + shift + PAGE, file.length - PAGE, PAGE)
  } else phdr(1, 1, 0, BASE, file.length, PAGE)
  file.writeUInt16LE(ownSegment ? 3 : 2, 0x38)
  pkg.copy(file, PAGE)
  file.write('TAIL', tail, 'latin1')
  return { file, icu: { name: 'icudt78_dat', addr: BASE + shift + PAGE, size: pkg.length }, tail, shift }
}

const u64 = (buf: Buffer, at: number) => Number(buf.readBigUInt64LE(at))

describe('English-only ICU in an executable (build/shrink-icu.mjs)', () => {
  it('refuses a file that is not a 64-bit little-endian ELF, a base without its symbol table, a table it cannot place', () => {
    const notElf = Buffer.from('MZ this is no ELF file, padded to be long enough for a header.......')
    expect(() => shrink.shrinkIcu(notElf, { name: 'icudt78_dat', addr: 0, size: 0 })).toThrow(
      /shrink ICU: not a little-endian 64-bit ELF file/,
    )
    expect(() => shrink.findIcuSymbol(notElf)).toThrow(/not a little-endian 64-bit ELF file/)
    const { file, icu } = elfWithIcu({ room: 2 })
    expect(() => shrink.findIcuSymbol(file)).toThrow(/no symbol table \(give the binary before `strip`\)/)
    expect(() => shrink.shrinkIcu(file, { ...icu, addr: 0x100 })).toThrow(/no LOAD segment holds icudt78_dat at 0x100/)
    // Full, and the ICU data in a segment that the kernel does not find the table by.
    const own = elfWithIcu({ room: 3, ownSegment: true })
    expect(() => shrink.shrinkIcu(own.file, own.icu)).toThrow(
      /no room for the program header table where the kernel looks for it/,
    )
  })

  it.each<[string, Layout, boolean]>([
    ['stays where it is when it has room', { room: 3 }, false],
    ['goes to the freed space when full', { room: 2 }, true],
    ['goes to the freed space from past the cut', { room: 3, tableAtEnd: true }, true],
    ['stays where it is with the ICU data in a segment of its own', { room: 4, ownSegment: true }, false],
  ])(
    'cuts the pages the English package no longer fills; the table %s; the rest stays at its address',
    (_, layout, moved) => {
      const { file, icu, tail, shift } = elfWithIcu(layout)
      const r = shrink.shrinkIcu(file, icu) as { file: Buffer; saved: number; items: number; kept: number }
      const small = icuData.englishOnly(file.subarray(PAGE, PAGE + icu.size)).data.length
      const phoff = u64(r.file, 0x20)
      expect(phoff).toBe(moved ? Math.ceil((PAGE + small) / 8) * 8 : 64)
      const count = r.file.readUInt16LE(0x38)
      expect(count).toBe(layout.ownSegment ? 4 : 3)
      const entry = (i: number) => ({
        type: r.file.readUInt32LE(phoff + i * 56),
        offset: u64(r.file, phoff + i * 56 + 8),
        vaddr: u64(r.file, phoff + i * 56 + 16),
        size: u64(r.file, phoff + i * 56 + 32),
      })
      expect(entry(0)).toEqual({
        type: 6,
        offset: phoff,
        vaddr: BASE + phoff,
        size: moved ? count * 56 : layout.room * 56,
      })
      // The package's last, partly filled page stays; the pages between it (or the table) and that page go.
      const cutEnd = Math.floor((PAGE + icu.size) / PAGE) * PAGE
      expect(r).toMatchObject({ items: 3, kept: 2, saved: cutEnd - 2 * PAGE })
      expect(r.file.length).toBe(file.length - r.saved)
      // The ICU segment ends where the package now ends (page-rounded); the next maps the rest at its old address.
      const [first, second] = [entry(count - 2), entry(count - 1)]
      expect(first).toEqual({
        type: 1,
        offset: layout.ownSegment ? PAGE : 0,
        vaddr: layout.ownSegment ? BASE + shift + PAGE : BASE,
        size: layout.ownSegment ? PAGE : 2 * PAGE,
      })
      expect(second).toEqual({ type: 1, offset: 2 * PAGE, vaddr: BASE + shift + cutEnd, size: file.length - cutEnd })
      const tailAt = second.offset + (tail - cutEnd)
      expect(r.file.toString('latin1', tailAt, tailAt + 4)).toBe('TAIL')
      expect(icuData.readIcuPackage(r.file.subarray(PAGE, 2 * PAGE)).items.map((i) => i.name)).toEqual([
        'icudt78l/en.res',
        'icudt78l/root.res',
      ])
    },
  )
})
