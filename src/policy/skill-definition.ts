import * as v from 'valibot'
import { isRoleName, ROLE_NAME_RULE } from '../config/role-name.js'

/** A problem found in a skill file: which file, which key, what to do. */
export interface SkillProblem {
  file: string
  path: string
  message: string
}

/** Memory a skill grants (docs/policy.md). */
export type MemoryGrant = 'none' | 'isolated' | 'team' | 'all'

/** A skill as policy sees it: plain data, built from SKILL.md or SKILL.yaml. */
export interface Skill {
  name: string
  description: string
  allowedRoles: string[]
  /** Mycelium tool patterns (`allowedTools`, plus `allowed-tools` entries that are patterns). */
  allowedTools: string[]
  /** `allowed-tools` entries that name a host's own tools (`Read`, `Bash(git:*)`): a lint problem. */
  hostTools: string[]
  triggers: string[]
  grants: { memory: MemoryGrant; memoryTeamRoles: string[] }
  protected: boolean
  license?: string
  metadata: Record<string, string>
  /** The Markdown body (the agent's instructions); empty for SKILL.yaml. */
  instructions: string
  /** The front matter exactly as written. */
  frontmatter: string
  /** The skill file and its folder (absolute). */
  file: string
  dir: string
}

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/
/** A list of strings, or one string standing for a list of one; element errors keep their index in the key path. */
const list = v.pipe(
  v.union([v.string(), v.array(v.unknown())]),
  v.transform((x) => (typeof x === 'string' ? [x] : x)),
  v.array(v.string()),
)

const FrontMatter = v.strictObject({
  name: v.optional(v.string()),
  id: v.optional(v.string()),
  description: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(1024, 'must be at most 1024 characters'),
  ),
  'allowed-tools': v.optional(
    v.union([v.string(), v.array(v.string())], 'expected a string of patterns separated by spaces or commas'),
  ),
  allowedTools: v.optional(list, []),
  allowedRoles: v.optional(list, []),
  triggers: v.optional(list, []),
  grants: v.optional(
    v.strictObject({
      memory: v.optional(v.picklist(['none', 'isolated', 'team', 'all']), 'none'),
      memoryTeamRoles: v.optional(v.array(v.string()), []),
    }),
    {},
  ),
  protected: v.optional(v.boolean(), false),
  license: v.optional(v.string()),
  metadata: v.optional(v.record(v.string(), v.string()), {}),
  compatibility: v.optional(v.string()),
})

/**
 * The entries of an Agent Skills `allowed-tools` string: separated by commas
 * and/or white space (`Read, Bash(git:*)` and `Read Bash(git:*)` alike),
 * except inside parentheses (`Bash(git add:*)` is one entry).
 */
function splitAllowedTools(text: string): string[] {
  const entries: string[] = []
  let current = ''
  let depth = 0
  for (const ch of text) {
    if (ch === '(') depth++
    else if (ch === ')') depth = Math.max(0, depth - 1)
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (current !== '') entries.push(current)
      current = ''
    } else current += ch
  }
  if (current !== '') entries.push(current)
  return entries
}

/** Whether an `allowed-tools` entry is a Mycelium pattern rather than a host tool such as `Read` or `Bash(git:*)`. */
function isMyceliumPattern(entry: string, separator: string): boolean {
  if (entry === '*') return true
  if (/[()\s]/.test(entry)) return false
  return entry.includes(':') || entry.includes(separator)
}

/** Splits `---` front matter from a SKILL.md; undefined when there is none. */
export function splitFrontMatter(text: string): { frontmatter: string; body: string } | undefined {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
  if (!m) return undefined
  return { frontmatter: m[1]!, body: text.slice(m[0].length) }
}

/** A valid skill, or every problem found in its front matter (file and key path each). */
export type SkillParseResult = { ok: true; skill: Skill } | { ok: false; problems: SkillProblem[] }

/**
 * Validates a skill's parsed front matter (pure). `folder` is the folder
 * name, which `name` must equal (Agent Skills rule).
 */
export function buildSkill(
  data: unknown,
  input: { file: string; dir: string; folder: string; frontmatter: string; body: string; separator: string },
): SkillParseResult {
  const problems: SkillProblem[] = []
  const at = (path: string, message: string) => problems.push({ file: input.file, path, message })
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    at('(front matter)', 'must be a YAML mapping with at least name and description')
    return { ok: false, problems }
  }
  const result = v.safeParse(FrontMatter, data)
  if (!result.success) {
    for (const issue of result.issues) {
      const path = (issue.path ?? []).map((p) => String(p.key)).join('.') || '(front matter)'
      if (issue.type === 'strict_object' && issue.received === 'undefined')
        at(path, `missing: add "${path}:" to the front matter`)
      else if (issue.type === 'strict_object' && issue.expected === 'never')
        at(
          path,
          `unknown key "${path.split('.').pop()}" (skill keys: name, description, allowed-tools, allowedTools, allowedRoles, triggers, grants, protected, license, metadata)`,
        )
      else if (issue.expected === '(string | Array)' || issue.expected === '(Array | string)')
        at(path, `expected a list of strings (or one string), got ${issue.received}`)
      else if (issue.expected === 'string' && /^(?:-?[\d.e+]+|true|false|null)$/.test(issue.received ?? ''))
        at(path, `expected a string, got ${issue.received} (quote it: "${issue.received}")`)
      else
        at(
          path,
          issue.message.startsWith('Invalid ')
            ? `expected ${issue.expected ?? 'another value'}, got ${issue.received}`
            : issue.message,
        )
    }
    return { ok: false, problems }
  }
  const fm = result.output
  const name = fm.name ?? fm.id
  if (name === undefined) at('name', `missing: add "name: ${input.folder}"`)
  else if (!NAME.test(name) || name.length > 64)
    at('name', `"${name}" must be 1-64 lowercase letters, digits and single hyphens`)
  else if (name !== input.folder)
    at('name', `"${name}" must equal the folder name "${input.folder}" (rename one of them)`)
  if (fm.name !== undefined && fm.id !== undefined && fm.name !== fm.id)
    at('id', 'give either name or id, not both with different values')
  fm.allowedRoles.forEach((role, i) => {
    if (role !== '*' && !isRoleName(role)) at(`allowedRoles.${i}`, `"${role}" is not a role name: ${ROLE_NAME_RULE}`)
  })
  fm.grants.memoryTeamRoles.forEach((role, i) => {
    if (!isRoleName(role)) at(`grants.memoryTeamRoles.${i}`, `"${role}" is not a role name: ${ROLE_NAME_RULE}`)
  })
  const hostTools: string[] = []
  const allowedTools = [...fm.allowedTools]
  const agentTools =
    fm['allowed-tools'] === undefined
      ? []
      : Array.isArray(fm['allowed-tools'])
        ? fm['allowed-tools'].flatMap(splitAllowedTools)
        : splitAllowedTools(fm['allowed-tools'])
  for (const entry of agentTools) (isMyceliumPattern(entry, input.separator) ? allowedTools : hostTools).push(entry)
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    skill: {
      name: name!,
      description: fm.description,
      allowedRoles: fm.allowedRoles,
      allowedTools,
      hostTools,
      triggers: fm.triggers,
      grants: fm.grants,
      protected: fm.protected,
      ...(fm.license !== undefined ? { license: fm.license } : {}),
      metadata: fm.metadata,
      instructions: input.body.trim(),
      frontmatter: input.frontmatter,
      file: input.file,
      dir: input.dir,
    },
  }
}
