import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** One bundled skill template: its files by relative path. */
export interface SkillTemplate {
  name: string
  files: ReadonlyMap<string, string>
}

declare const __MYC_TEMPLATES__: Record<string, Record<string, string>> | undefined

/**
 * The skill templates shipped with myc (the repo's `skills/` folder). The
 * build embeds them (esbuild `define`), so the bundle, the single executable
 * and an npm install read the same data; from source they are read from disk.
 */
export async function skillTemplates(): Promise<SkillTemplate[]> {
  const embedded = typeof __MYC_TEMPLATES__ === 'object' ? __MYC_TEMPLATES__ : undefined
  const data = embedded ?? (await readTemplateDir(fileURLToPath(new URL('../../skills', import.meta.url))))
  return Object.entries(data)
    .map(([name, files]) => ({ name, files: new Map(Object.entries(files)) }))
    .sort((a, b) => a.name.localeCompare(b.name))
}

/** Reads a skills folder into { skill: { relative path: text } } (also used by the build). */
export async function readTemplateDir(dir: string): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {}
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const files: Record<string, string> = {}
    const walk = async (sub: string) => {
      for (const f of await readdir(path.join(dir, entry.name, sub), { withFileTypes: true })) {
        const rel = sub ? `${sub}/${f.name}` : f.name
        if (f.isDirectory()) await walk(rel)
        else files[rel] = await readFile(path.join(dir, entry.name, rel), 'utf8')
      }
    }
    await walk('')
    out[entry.name] = files
  }
  return out
}
