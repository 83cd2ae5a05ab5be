import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Absolute path of a fixture server by behaviour name (echo, crash, hang, …). */
export function fixtureServer(name: string): string {
  return fileURLToPath(new URL(`../fixtures/servers/${name}.mjs`, import.meta.url))
}

export const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
