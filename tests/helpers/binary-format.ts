import { openSync, readSync, closeSync } from 'node:fs'

/** The format and architecture of an executable, read from its header. */
export interface BinaryFormat {
  format: 'ELF' | 'Mach-O' | 'PE' | 'unknown'
  arch: 'x64' | 'arm64' | 'other'
}

function head(file: string, length: number, position = 0): Buffer {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(length)
    readSync(fd, buf, 0, length, position)
    return buf
  } finally {
    closeSync(fd)
  }
}

/** Reads ELF e_machine, Mach-O cputype or the PE machine field. */
export function binaryFormat(file: string): BinaryFormat {
  const h = head(file, 64)
  if (h[0] === 0x7f && h.toString('latin1', 1, 4) === 'ELF') {
    const machine = h.readUInt16LE(18)
    return { format: 'ELF', arch: machine === 0x3e ? 'x64' : machine === 0xb7 ? 'arm64' : 'other' }
  }
  if (h.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = h.readUInt32LE(4)
    return { format: 'Mach-O', arch: cpu === 0x01000007 ? 'x64' : cpu === 0x0100000c ? 'arm64' : 'other' }
  }
  if (h.toString('latin1', 0, 2) === 'MZ') {
    const peOffset = h.readUInt32LE(0x3c)
    const pe = head(file, 6, peOffset)
    if (pe.toString('latin1', 0, 4) === 'PE\0\0') {
      const machine = pe.readUInt16LE(4)
      return { format: 'PE', arch: machine === 0x8664 ? 'x64' : machine === 0xaa64 ? 'arm64' : 'other' }
    }
  }
  return { format: 'unknown', arch: 'other' }
}

/** The section names of a 64-bit little-endian ELF file (x64, arm64), from its section header table. */
export function elfSectionNames(file: string): string[] {
  const h = head(file, 64)
  if (h[0] !== 0x7f || h.toString('latin1', 1, 4) !== 'ELF' || h[4] !== 2 || h[5] !== 1)
    throw new Error(`${file} is not a 64-bit little-endian ELF file`)
  const tableAt = Number(h.readBigUInt64LE(0x28))
  const entrySize = h.readUInt16LE(0x3a)
  const count = h.readUInt16LE(0x3c)
  const table = head(file, entrySize * count, tableAt)
  const names = table.subarray(entrySize * h.readUInt16LE(0x3e))
  const strings = head(file, Number(names.readBigUInt64LE(0x20)), Number(names.readBigUInt64LE(0x18)))
  return Array.from({ length: count }, (_, i) => {
    const at = table.readUInt32LE(entrySize * i)
    return strings.toString('latin1', at, strings.indexOf(0, at))
  })
}
