// ICU's common data package (the format of Node's built-in `icudt<N>_dat`):
// read its table of contents and write a package with fewer items. Used by
// build/shrink-icu.mjs to keep English only, as Node's own `small-icu` build does.
//
// Layout (ICU's ucmndata.h): a data header (headerSize, magic 0xda 0x27, then
// UDataInfo with dataFormat "CmnD"), then at headerSize the table of contents:
// a uint32 count and count pairs (nameOffset, dataOffset), both counted from
// the count itself. Names are NUL-terminated ("icudt78l/coll/de.res") and
// sorted, as ICU searches them by bisection; each item starts on 16 bytes.

const ALIGN = 16

function fail(message) {
  throw new Error(`ICU data: ${message}`)
}

/** The items of a little-endian ICU common data package: name, bytes; and its header. */
export function readIcuPackage(buf) {
  if (buf.length < 32 || buf[2] !== 0xda || buf[3] !== 0x27) fail('no ICU data header (magic 0xda 0x27) at the start')
  const headerSize = buf.readUInt16LE(0)
  if (buf.toString('latin1', 12, 16) !== 'CmnD') fail(`data format "${buf.toString('latin1', 12, 16)}", not a common data package ("CmnD")`)
  if (buf[8] !== 0) fail('a big-endian package; only little-endian ones are read')
  const count = buf.readUInt32LE(headerSize)
  if (headerSize + 4 + count * 8 > buf.length) fail(`a table of ${count} items does not fit in ${buf.length} bytes`)
  const entry = (i) => {
    const at = headerSize + 4 + i * 8
    return { nameOffset: buf.readUInt32LE(at), dataOffset: buf.readUInt32LE(at + 4) }
  }
  const items = []
  for (let i = 0; i < count; i++) {
    const { nameOffset, dataOffset } = entry(i)
    const nameStart = headerSize + nameOffset
    const name = buf.toString('latin1', nameStart, buf.indexOf(0, nameStart))
    const end = i + 1 < count ? headerSize + entry(i + 1).dataOffset : buf.length
    items.push({ name, data: buf.subarray(headerSize + dataOffset, end) })
  }
  return { header: buf.subarray(0, headerSize), items }
}

const pad = (n) => Math.ceil(n / ALIGN) * ALIGN

/** A package of the same header with the given items, in name order. */
export function writeIcuPackage(header, items) {
  const sorted = [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const tocSize = 4 + sorted.length * 8
  const names = sorted.map((item) => Buffer.from(`${item.name}\0`, 'latin1'))
  let dataAt = pad(header.length + tocSize + names.reduce((n, b) => n + b.length, 0)) - header.length
  const size = header.length + dataAt + sorted.reduce((n, item) => n + pad(item.data.length), 0)
  const out = Buffer.alloc(size)
  header.copy(out, 0)
  out.writeUInt32LE(sorted.length, header.length)
  let nameAt = tocSize
  sorted.forEach((item, i) => {
    out.writeUInt32LE(nameAt, header.length + 4 + i * 8)
    out.writeUInt32LE(dataAt, header.length + 8 + i * 8)
    names[i].copy(out, header.length + nameAt)
    item.data.copy(out, header.length + dataAt)
    nameAt += names[i].length
    dataAt += pad(item.data.length)
  })
  return out
}

/** A locale's own resource bundle ("af.res", "coll/de__PHONEBOOK.res": subtags after the language start upper case, so "res_index.res" is not one), as opposed to shared data ("root.res", "zoneinfo64.res", "ibm-437_P100-1995.cnv"). */
export function isLocaleBundle(name) {
  const base = name.slice(name.lastIndexOf('/') + 1)
  return /^[a-z]{2,3}(_[A-Z0-9][A-Za-z0-9]*|_)*\.res$/.test(base)
}

/** Keeps every item but other languages' locale bundles: English (`en`, `en_*`), the root and all shared data stay. */
export function englishOnly(buf) {
  const { header, items } = readIcuPackage(buf)
  const kept = items.filter((item) => !isLocaleBundle(item.name) || /\/(?:[^/]+\/)?en(_[A-Z0-9][A-Za-z0-9]*|_)*\.res$/.test(item.name))
  return { data: writeIcuPackage(header, kept), items: items.length, kept: kept.length }
}
