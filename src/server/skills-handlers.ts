import { ProtocolError, type Server } from '@modelcontextprotocol/server'
import { DIRECTORY_MIME_TYPE, GetSkillRequestParamsSchema, ListSkillsRequestParamsSchema, ReadResourceDirectoryRequestParamsSchema, SKILLS_EXTENSION_ID } from '@modelcontextprotocol/core/ext/skills'
import { OWN_SKILLS_BASE, type ServedFile, type ServedSkill } from '../skills/skill-index.js'
import { decodeCursor, paginate } from './pagination.js'

export { SKILLS_EXTENSION_ID }

/** Listings differ by role, so clients must not share them across principals. */
const CACHE = { ttlMs: 0, cacheScope: 'private' as const }

/** The one answer for a skill URI that is hidden, disabled, escapes its folder or never existed. */
function skillNotFound(uri: unknown): ProtocolError {
  return new ProtocolError(-32602, `Skill not found: ${typeof uri === 'string' ? uri : JSON.stringify(uri)}`)
}

/** The capability entry of the Skills extension. */
export const skillsCapability = { [SKILLS_EXTENSION_ID]: { directoryRead: true } }

/**
 * Serves the principal's skills over the Skills extension (SEP-2640):
 * `skills/list`, `skills/get` and `resources/directory/read`. What the role
 * cannot reach does not exist: lookups are exact matches in the served
 * index, so `..`, encoded separators and foreign schemes find nothing.
 */
export function registerSkillHandlers(server: Server, skills: () => readonly ServedSkill[], pageSize: number): void {
  server.setRequestHandler('skills/list', { params: ListSkillsRequestParamsSchema }, (params) => {
    const entries = skills().map((s) => s.entry)
    const page = paginate(entries, decodeCursor(params.cursor, 'skills'), pageSize, 'skills')
    return { skills: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), ...CACHE }
  })
  server.setRequestHandler('skills/get', { params: GetSkillRequestParamsSchema }, (params) => {
    const skill = skills().find((s) => s.entry.uri === params.uri)
    if (!skill) throw skillNotFound(params.uri)
    return { skill: skill.entry, ...CACHE }
  })
  server.setRequestHandler('resources/directory/read', { params: ReadResourceDirectoryRequestParamsSchema }, (params) => {
    const uri = params.uri.endsWith('/') ? params.uri : `${params.uri}/`
    for (const skill of skills()) {
      const children = skill.dirs.get(uri)
      if (!children) continue
      const resources = children.map((child) => {
        const isDir = child.endsWith('/')
        const name = decodeURIComponent(child.replace(/\/$/, '').split('/').pop() ?? child)
        const file = skill.files.get(child)
        return isDir ? { uri: child, name, mimeType: DIRECTORY_MIME_TYPE } : { uri: child, name, mimeType: file?.mimeType, size: file?.bytes.length }
      })
      const page = paginate(resources, decodeCursor(params.cursor, 'directory'), pageSize, 'directory')
      return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), ...CACHE }
    }
    throw new ProtocolError(-32602, `Resource not found: ${params.uri}`)
  })
}

/** A served skill file for resources/read, or undefined (then the caller answers "not found"). */
export function findSkillFile(uri: string, skills: readonly ServedSkill[]): ServedFile | undefined {
  if (!uri.startsWith(OWN_SKILLS_BASE)) return undefined
  for (const skill of skills) {
    const file = skill.files.get(uri)
    if (file) return file
  }
  return undefined
}

/** The resources/read result for a served file: text when it is UTF-8, else a blob. */
export function readSkillFile(file: ServedFile): Record<string, unknown> {
  const text = Buffer.from(file.bytes).toString('utf8')
  const isText = Buffer.from(text, 'utf8').equals(Buffer.from(file.bytes))
  return { contents: [isText ? { uri: file.uri, mimeType: file.mimeType, text } : { uri: file.uri, mimeType: file.mimeType, blob: Buffer.from(file.bytes).toString('base64') }] }
}
