/** What myc uses of `node:sea`. */
interface Sea {
  isSea(): boolean
  getAsset(key: string): ArrayBuffer
}

/** `node:sea` when this process is a single executable (Node SEA), else undefined (Node.js running the bundle or the source). */
export function singleExecutable(): Sea | undefined {
  try {
    const sea = process.getBuiltinModule?.('node:sea') as Sea | undefined
    return sea?.isSea?.() === true ? sea : undefined
  } catch {
    return undefined // A Node.js without node:sea runs no single executable.
  }
}
