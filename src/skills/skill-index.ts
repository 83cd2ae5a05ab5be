import { lstat, readdir, readFile, realpath } from 'node:fs/promises'
import path from 'node:path'
import type { Skill as SkillEntry } from '@modelcontextprotocol/core/ext/skills'
import type { Skill } from '../policy/skill-definition.js'

/** The reserved authority of myc's own skills: `skill://mycelium/<name>/SKILL.md`. */
export const OWN_SKILLS_BASE = 'skill://mycelium/'

/** One file served for a skill: the exact bytes, their MIME type. */
export interface ServedFile {
  uri: string
  bytes: Uint8Array
  mimeType: string
}

/** A skill as served over MCP: its entry (digests of the served bytes), its files, its directories. */
export interface ServedSkill {
  name: string
  entry: SkillEntry
  files: ReadonlyMap<string, ServedFile>
  /** Directory URI (ending in `/`) → direct children (file or directory URIs). */
  dirs: ReadonlyMap<string, readonly string[]>
}

/** A skill that is not served, and why (for `myc skills lint`). */
export interface UnservedSkill {
  name: string
  file: string
  reason: string
}

const MIME: Record<string, string> = {
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.py': 'text/x-python',
  '.sh': 'application/x-sh',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.html': 'text/html',
  '.csv': 'text/csv',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}

function mimeOf(file: string): string {
  return MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream'
}

/** Percent-encodes each path segment (the URI form of a relative path). */
function uriOf(name: string, rel: string): string {
  return `${OWN_SKILLS_BASE}${[name, ...rel.split('/').filter(Boolean)].map(encodeURIComponent).join('/')}`
}

/**
 * Reads every file of each SKILL.md skill (symlinks that leave the skill's
 * folder are skipped) and builds its served entry with the SDK's own
 * `skillEntry` (sha256 digests and sizes of the exact bytes). A skill over
 * the per-file or per-skill cap is not served at all, never half served.
 */
export async function buildSkillIndex(
  skills: readonly Skill[],
  limits: { maxFileBytes: number; maxSkillBytes: number },
): Promise<{ served: Map<string, ServedSkill>; unserved: UnservedSkill[] }> {
  const { skillEntry } = await import('@modelcontextprotocol/server/ext/skills')
  const served = new Map<string, ServedSkill>()
  const unserved: UnservedSkill[] = []
  for (const skill of skills) {
    if (!skill.file.endsWith('SKILL.md')) {
      unserved.push({
        name: skill.name,
        file: skill.file,
        reason: 'SKILL.yaml skills are not served over MCP (the Skills extension needs a SKILL.md)',
      })
      continue
    }
    const root = await realpath(skill.dir)
    const files: Record<string, Uint8Array> = {}
    const dirs = new Map<string, string[]>()
    let total = 0
    let problem: string | undefined
    const walk = async (rel: string): Promise<void> => {
      const dirUri = `${uriOf(skill.name, rel)}/`
      const children: string[] = []
      dirs.set(dirUri, children)
      for (const entry of (await readdir(path.join(root, rel), { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (problem) return
        const relPath = rel ? `${rel}/${entry.name}` : entry.name
        const abs = path.join(root, relPath)
        const info = await lstat(abs)
        let real = abs
        if (info.isSymbolicLink()) {
          real = await realpath(abs).catch(() => '')
          if (!real.startsWith(`${root}${path.sep}`)) continue
        }
        const stat = info.isSymbolicLink() ? await lstat(real) : info
        if (stat.isDirectory()) {
          children.push(`${uriOf(skill.name, relPath)}/`)
          await walk(relPath)
        } else if (stat.isFile()) {
          if (stat.size > limits.maxFileBytes)
            problem = `${relPath} is ${stat.size} bytes, over skills.maxFileBytes (${limits.maxFileBytes})`
          total += stat.size
          if (total > limits.maxSkillBytes)
            problem = `the skill's files add up to over skills.maxSkillBytes (${limits.maxSkillBytes})`
          if (problem) return
          files[relPath] = await readFile(real)
          children.push(uriOf(skill.name, relPath))
        }
      }
    }
    await walk('')
    if (problem) {
      unserved.push({ name: skill.name, file: skill.file, reason: problem })
      continue
    }
    const entry = await skillEntry(skill.name, files, { baseUri: OWN_SKILLS_BASE })
    const servedFiles = new Map<string, ServedFile>()
    for (const [rel, bytes] of Object.entries(files)) {
      const uri = uriOf(skill.name, rel)
      servedFiles.set(uri, { uri, bytes, mimeType: mimeOf(rel) })
    }
    served.set(skill.name, { name: skill.name, entry, files: servedFiles, dirs })
  }
  return { served, unserved }
}
