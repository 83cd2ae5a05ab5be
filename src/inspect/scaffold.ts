import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MycError } from '../errors.js'
import { PROJECT_STATE_DIR } from '../config/state-roots.js'
import { skillTemplates, type SkillTemplate } from '../assets/templates.js'
import { splitFrontMatter } from '../policy/skill-definition.js'
import { parse as parseYaml } from 'yaml'

/** The starter config `myc init` writes; `$schema` as {@link schemaReference} makes it. */
function starterConfig($schema: string): Record<string, unknown> {
  return {
    $schema,
    mcpServers: {
      fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] },
      memory: {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-memory'],
        env: { MEMORY_FILE_PATH: `${PROJECT_STATE_DIR}/memory.jsonl` },
      },
    },
    roles: { default: 'developer' },
    // A session starts with the meta tools alone (docs/tokens.md): activate_skill names every skill, search_tools finds the one a tool needs.
    session: { defaultSkills: [], escalation: 'auto', protectedSkills: ['common'] },
    audit: { file: `${PROJECT_STATE_DIR}/audit.jsonl` },
  }
}

const MINIMAL = ['common', 'reader']

/** Writes files, refusing to overwrite any that exist (nothing is written then). */
async function writeAll(files: ReadonlyMap<string, string>): Promise<string[]> {
  const existing = [...files.keys()].filter((f) => existsSync(f))
  if (existing.length > 0)
    throw new MycError(
      'usage',
      `not overwriting existing files: ${existing.join(', ')} (remove them or choose another folder)`,
    )
  for (const [file, text] of files) {
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, text, { flag: 'wx' })
  }
  return [...files.keys()]
}

/**
 * The package's own mycelium.schema.json beside this code: build/../ in the
 * bundle (an npm install or a clone), the repo root from src/; undefined in
 * the single executable, which has no files beside it.
 */
export function packageSchemaFile(): string | undefined {
  let here: string
  try {
    here = typeof __dirname === 'string' ? __dirname : path.dirname(fileURLToPath(import.meta.url))
  } catch {
    return undefined
  }
  return [path.resolve(here, '..', SCHEMA_FILE), path.resolve(here, '..', '..', SCHEMA_FILE)].find((f) => existsSync(f))
}

const SCHEMA_FILE = 'mycelium.schema.json'

/**
 * The `$schema` of a config written in `dir`, for `schemaFile`: a path
 * relative to the config that starts with `./` or `../` (editors built on
 * VS Code's JSON service resolve such a one against the file; a bare name
 * they read as a URI), or a file:// URL where no relative path exists (another
 * drive on Windows). Offline, unlike a URL of the registry.
 */
export function schemaReference(dir: string, schemaFile: string): string {
  const relative = path.relative(dir, schemaFile)
  if (path.isAbsolute(relative)) return pathToFileURL(schemaFile).href
  const posix = relative.split(path.sep).join('/')
  return posix.startsWith('../') ? posix : `./${posix}`
}

/** `myc init [DIR] [--minimal]`: a starter config and skills from the bundled templates. */
export async function initProject(
  dir: string,
  /** `packagedSchema`: the package's schema file (default: {@link packageSchemaFile}); null: none, as in the executable. */
  options: { minimal?: boolean; packagedSchema?: string | null } = {},
): Promise<string[]> {
  const templates = (await skillTemplates()).filter((t) => !options.minimal || MINIMAL.includes(t.name))
  // The package's schema; without one (the single executable) a copy beside the config, made from the same schema.
  const packaged = options.packagedSchema === undefined ? packageSchemaFile() : (options.packagedSchema ?? undefined)
  const schemaFile = packaged ?? path.join(dir, SCHEMA_FILE)
  const files = new Map<string, string>([
    [
      path.join(dir, 'mycelium.config.json'),
      `${JSON.stringify(starterConfig(schemaReference(dir, schemaFile)), null, 2)}\n`,
    ],
  ])
  if (!packaged) {
    const { configJsonSchema } = await import('../config/json-schema.js')
    files.set(schemaFile, `${JSON.stringify(configJsonSchema(), null, 2)}\n`)
  }
  for (const t of templates) for (const [rel, text] of t.files) files.set(path.join(dir, 'skills', t.name, rel), text)
  return writeAll(files)
}

/** Template names with their descriptions, for `myc skill templates`. */
export async function listTemplates(): Promise<Array<{ name: string; description: string }>> {
  return (await skillTemplates()).map((t) => ({ name: t.name, description: describe(t) }))
}

function describe(t: SkillTemplate): string {
  const md = t.files.get('SKILL.md')
  const fm = md ? splitFrontMatter(md)?.frontmatter : undefined
  const data = fm ? (parseYaml(fm) as { description?: string }) : undefined
  return data?.description ?? ''
}

/** `myc skill add NAME [--template T]`: a new skill folder under `skillsDir`. */
export async function addSkill(skillsDir: string, name: string, template?: string): Promise<string[]> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name) || name.length > 64)
    throw new MycError('usage', `skill name "${name}" must be 1-64 lowercase letters, digits and single hyphens`)
  const dir = path.join(skillsDir, name)
  if (existsSync(dir)) throw new MycError('usage', `${dir} exists already (choose another name)`)
  const files = new Map<string, string>()
  if (template !== undefined) {
    const templates = await skillTemplates()
    const t = templates.find((x) => x.name === template)
    if (!t)
      throw new MycError('usage', `no template "${template}" (templates: ${templates.map((x) => x.name).join(', ')})`)
    for (const [rel, text] of t.files)
      files.set(path.join(dir, rel), rel === 'SKILL.md' ? text.replace(/^name: .*$/m, `name: ${name}`) : text)
  } else {
    files.set(
      path.join(dir, 'SKILL.md'),
      `---\nname: ${name}\ndescription: What this skill is for, in one sentence.\nallowedRoles: [developer]\nallowedTools: []\ntriggers: []\n---\n# ${name}\n\nInstructions for the agent: when to use the tools above and how.\n`,
    )
  }
  return writeAll(files)
}
