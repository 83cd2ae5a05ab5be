import { ProtocolError, type Server } from '@modelcontextprotocol/server'
import {
  DIRECTORY_MIME_TYPE,
  GetSkillRequestParamsSchema,
  ListSkillsRequestParamsSchema,
  ReadResourceDirectoryRequestParamsSchema,
  SKILLS_EXTENSION_ID,
} from '@modelcontextprotocol/core/ext/skills'
import type { RelayOutcome } from '../protocol/request-relay.js'
import type { ChildSkillEntry } from '../registry/catalogue.js'
import { mapChildUri } from '../skills/child-skills.js'
import { OWN_SKILLS_BASE, type ServedFile, type ServedSkill } from '../skills/skill-index.js'
import { decodeCursor, ListPages, paginate } from './pagination.js'
import { RpcCode } from '../protocol/facts.js'

/** Listings differ by role, so clients must not share them across principals. */
const CACHE = { ttlMs: 0, cacheScope: 'private' as const }

/** The one answer for a skill URI that is hidden, disabled, escapes its folder or never existed. */
function skillNotFound(uri: unknown): ProtocolError {
  return new ProtocolError(
    RpcCode.invalidParams,
    `Skill not found: ${typeof uri === 'string' ? uri : JSON.stringify(uri)}`,
  )
}

/** The capability entry of the Skills extension. */
export const skillsCapability = { [SKILLS_EXTENSION_ID]: { directoryRead: true } }

/** Where a client connection's skills come from: myc's own, and the children's its principal may see. */
export interface SkillSources {
  local(): readonly ServedSkill[]
  /** Children's skills visible to the principal (mapped URIs). */
  children(): readonly ChildSkillEntry[]
  /** The child behind a `skill://<server>/…` URI the principal may see; undefined otherwise. */
  resolveChild(uri: string): { server: string; childUri: string } | undefined
  /** Sends a request to a child (untouched result). */
  forward(server: string, method: string, params: Record<string, unknown>): Promise<RelayOutcome>
  /** What the listing is made from (the same things, compared one by one, make the same listing): lets a listing be served again as it is. */
  sources?(): readonly unknown[]
}

/** Maps a child's directory listing back under `skill://<server>/`. */
function mapDirectory(server: string, result: Record<string, unknown>): Record<string, unknown> {
  const resources = Array.isArray(result.resources)
    ? (result.resources as Array<{ uri: string }>).map((r) => ({ ...r, uri: mapChildUri(server, r.uri) }))
    : []
  return { ...result, resources, ...CACHE }
}

/**
 * Serves the principal's skills over the Skills extension (SEP-2640):
 * `skills/list`, `skills/get` and `resources/directory/read`, myc's own and
 * the children's (mapped under `skill://<server>/`). What the role cannot
 * reach does not exist: lookups are exact matches in the served index or
 * the children's listed roots, so `..`, encoded separators and foreign
 * schemes find nothing.
 */
export function registerSkillHandlers(server: Server, sources: SkillSources, pageSize: number): void {
  const pages = new ListPages()
  server.setRequestHandler('skills/list', { params: ListSkillsRequestParamsSchema }, (params) => {
    const offset = decodeCursor(params.cursor, 'skills')
    const build = () => {
      const entries = [...sources.local().map((s) => s.entry), ...sources.children().map((c) => c.entry)]
      const page = paginate(entries, offset, pageSize, 'skills')
      return { skills: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), ...CACHE }
    }
    return (sources.sources ? pages.page(sources.sources(), offset, build) : build()) as never
  })
  server.setRequestHandler('skills/get', { params: GetSkillRequestParamsSchema }, (params) => {
    const entry =
      sources.local().find((s) => s.entry.uri === params.uri)?.entry ??
      sources.children().find((c) => c.entry.uri === params.uri)?.entry
    if (!entry) throw skillNotFound(params.uri)
    return { skill: entry, ...CACHE }
  })
  server.setRequestHandler(
    'resources/directory/read',
    { params: ReadResourceDirectoryRequestParamsSchema },
    async (params) => {
      const uri = params.uri.endsWith('/') ? params.uri : `${params.uri}/`
      for (const skill of sources.local()) {
        const children = skill.dirs.get(uri)
        if (!children) continue
        const resources = children.map((child) => {
          const isDir = child.endsWith('/')
          const name = decodeURIComponent(child.replace(/\/$/, '').split('/').pop() ?? child)
          const file = skill.files.get(child)
          return isDir
            ? { uri: child, name, mimeType: DIRECTORY_MIME_TYPE }
            : { uri: child, name, mimeType: file?.mimeType, size: file?.bytes.length }
        })
        const page = paginate(resources, decodeCursor(params.cursor, 'directory'), pageSize, 'directory')
        return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), ...CACHE }
      }
      const target = sources.resolveChild(params.uri)
      if (target) {
        const outcome = await sources.forward(target.server, 'resources/directory/read', {
          uri: target.childUri,
          ...(params.cursor ? { cursor: params.cursor } : {}),
        })
        if (outcome.ok) return mapDirectory(target.server, outcome.result) as never
      }
      throw new ProtocolError(RpcCode.invalidParams, `Resource not found: ${params.uri}`)
    },
  )
}

/** Maps a child's resources/read answer back under `skill://<server>/`. */
export function mapChildRead(server: string, result: Record<string, unknown>): Record<string, unknown> {
  const contents = Array.isArray(result.contents)
    ? (result.contents as Array<{ uri: string }>).map((c) => ({ ...c, uri: mapChildUri(server, c.uri) }))
    : result.contents
  return { ...result, contents }
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
  return {
    contents: [
      isText
        ? { uri: file.uri, mimeType: file.mimeType, text }
        : { uri: file.uri, mimeType: file.mimeType, blob: Buffer.from(file.bytes).toString('base64') },
    ],
  }
}
