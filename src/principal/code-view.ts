import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { CodeRuns } from '../code/code-runner.js'
import { toolSignature } from '../code/signatures.js'
import { BUILTIN_SERVER, RUN_CODE_TOOL } from '../policy/policy.js'
import type { ToolEntry } from '../registry/catalogue.js'
import { toWireName, type WireNameOptions } from '../registry/wire-names.js'
import { META_TOOL_DEFS } from './meta-tools.js'
import { oneLine, rankTools } from './tool-search.js'
import type { BuiltinCallContext, CodeModeHandle, PrincipalView } from './view.js'

/** The meta tools a code-mode session lists besides search_tools and run_code: its skill tools. */
const LISTED_META = ['list_skills', 'activate_skill', 'deactivate_skill', 'get_context'] as const

const SEARCH_DEF: Omit<Tool, 'name'> = {
  ...META_TOOL_DEFS.search_tools,
  description: 'Finds tools by what they do; gives each one’s TypeScript signature for run_code.',
}

/** run_code's definition: what the code is, what it may use (`calls`: how the code calls tools), and its limits. */
export function runCodeDef(
  runner: CodeRuns,
  calls = '`await tools.<server>.<tool>(args)` (signatures from search_tools)',
): Omit<Tool, 'name'> {
  const { timeoutMs, memoryMb } = runner.limits
  const language = runner.setup.typescript ? 'JavaScript or TypeScript (types are stripped)' : 'JavaScript only'
  return {
    description: `Runs code in a sandbox: the body of an async function (${language}) that calls your tools as ${calls} and \`return\`s its result. Gives console output, then the returned value as JSON. No network, no files; ${Math.round(timeoutMs / 1000)} s and ${memoryMb} MB at most.`,
    inputSchema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
  }
}

export interface CodeModeViewOptions {
  runner: CodeRuns
  naming: WireNameOptions
  /** The live catalogue's tools (signatures, and search in open mode). */
  catalogueTools: () => readonly ToolEntry[]
}

/**
 * Code mode (`session.codeMode`, docs/code-mode.md) over a session's view:
 * it lists only myc's meta tools (search_tools, run_code and the skill
 * tools), as lazy mode does; every tool the view shows stays callable by
 * name, and from the code. search_tools gives TypeScript signatures (the
 * view's own search where it has one, so tools of skills not yet active
 * are found too). What is visible or callable is the view's alone:
 * run_code itself runs on the call path (runtime/principal-tools.ts).
 */
export function codeModeView(view: PrincipalView, options: CodeModeViewOptions): PrincipalView {
  const wire = (name: string) => toWireName(BUILTIN_SERVER, name, options.naming)
  const searchWire = wire('search_tools')
  const runCode: Tool = { name: wire(RUN_CODE_TOOL), ...runCodeDef(options.runner) }
  const search: Tool = { name: searchWire, ...SEARCH_DEF }
  const listedMeta = new Set(LISTED_META.map(wire))
  let cache: { from: readonly Tool[]; listed: readonly Tool[]; callable: readonly Tool[] } | undefined
  const lists = () => {
    const from = view.builtinTools()
    if (cache?.from !== from) {
      const others = from.filter((t) => t.name !== searchWire)
      cache = {
        from,
        listed: [search, runCode, ...others.filter((t) => listedMeta.has(t.name))],
        callable: [search, ...others],
      }
    }
    return cache
  }
  const viewSearches = () => view.builtinTools().some((t) => t.name === searchWire)
  const handle: CodeModeHandle = { wireName: runCode.name, runner: options.runner, builtins: () => lists().callable }
  const searchContext = { view, options, viewSearches, builtins: () => lists().callable }
  return {
    ...delegate(view),
    listsChildTools: false,
    builtinTools: () => lists().listed,
    callBuiltin: (wireName, args, ctx) =>
      wireName === searchWire ? codeSearch(searchContext, args, ctx) : view.callBuiltin(wireName, args, ctx),
    codeMode: handle,
  }
}

/** Every member of `view` but the ones code mode changes, bound to it. */
function delegate(view: PrincipalView): PrincipalView {
  const out: PrincipalView = {
    toolVisible: (entry) => view.toolVisible(entry),
    promptVisible: (entry) => view.promptVisible(entry),
    serverVisible: (server) => view.serverVisible(server),
    builtinTools: () => view.builtinTools(),
    callBuiltin: (wireName, args, ctx) => view.callBuiltin(wireName, args, ctx),
    onChange: (listener) => view.onChange(listener),
  }
  // Optional members only where the view has them (open mode has none of them).
  if (view.servedSkills) out.servedSkills = () => view.servedSkills!()
  if (view.childSkillsVisible) out.childSkillsVisible = (server) => view.childSkillsVisible!(server)
  if (view.revision) out.revision = () => view.revision!()
  if (view.describe) out.describe = () => view.describe!()
  if (view.reachableSkills) out.reachableSkills = () => view.reachableSkills!()
  if (view.activate) out.activate = (name, actor, ctx) => view.activate!(name, actor, ctx)
  if (view.deactivate) out.deactivate = (name, actor) => view.deactivate!(name, actor)
  if (view.recordCall) out.recordCall = (call) => view.recordCall!(call)
  return out
}

interface SearchContext {
  view: PrincipalView
  options: CodeModeViewOptions
  viewSearches: () => boolean
  builtins: () => readonly Tool[]
}

interface Hit {
  name: string
  description: string
  skills?: string[]
  active?: boolean
  signature: string
}

/** search_tools in code mode: the view's own search (or, without one, a search of what the session may call), each hit with its signature. */
async function codeSearch(
  context: SearchContext,
  args: Record<string, unknown>,
  ctx: () => BuiltinCallContext,
): Promise<CallToolResult> {
  const { view, options } = context
  const separator = options.naming.separator
  const entries = new Map(options.catalogueTools().map((e) => [e.wireName, e]))
  const builtins = new Map(context.builtins().map((t) => [t.name, t]))
  const signature = (name: string) => {
    const entry = entries.get(name)
    if (entry) return toolSignature(entry.server, entry.name, entry.def.inputSchema, entry.def.outputSchema)
    const tool = builtins.get(name)
    const bare = name.startsWith(`${BUILTIN_SERVER}${separator}`)
      ? name.slice(BUILTIN_SERVER.length + separator.length)
      : name
    return toolSignature(BUILTIN_SERVER, bare, tool?.inputSchema, tool?.outputSchema)
  }
  let hits: Array<Omit<Hit, 'signature'>>
  if (context.viewSearches()) {
    const answer = await view.callBuiltin(toWireName(BUILTIN_SERVER, 'search_tools', options.naming), args, ctx)
    if (!answer || answer.isError) return answer ?? { content: [], isError: true }
    hits = ((answer.structuredContent as { tools?: Array<Omit<Hit, 'signature'>> } | undefined)?.tools ?? []).map(
      (h) => ({ ...h }),
    )
  } else {
    const query = typeof args.query === 'string' ? args.query : ''
    if (query.trim() === '')
      return {
        content: [{ type: 'text', text: 'search_tools needs "query": words for what the tool should do' }],
        isError: true,
      }
    const limit =
      typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(50, Math.max(1, args.limit)) : 8
    const docs = [
      ...[...builtins.values()].map((t) => ({
        name: t.name,
        description: oneLine(t.description ?? ''),
        skills: [],
        active: true,
      })),
      ...[...entries.values()]
        .filter((e) => view.toolVisible(e))
        .map((e) => ({ name: e.wireName, description: oneLine(e.def.description ?? ''), skills: [], active: true })),
    ]
    hits = rankTools(docs, query, limit).map((h) => ({ name: h.name, description: h.description }))
  }
  const tools: Hit[] = hits.map((h) => ({ ...h, signature: signature(h.name) }))
  return searchResult(tools)
}

function searchResult(tools: Hit[]): CallToolResult {
  const lines = tools.map((h) => {
    const skill = h.active === false && h.skills?.length ? ` (activate skill ${h.skills.join(' or ')} first)` : ''
    return `- ${h.description}${skill}\n  ${h.signature}`
  })
  return {
    content: [
      {
        type: 'text',
        text:
          lines.length === 0
            ? 'No tool matches those words; try others.'
            : `${lines.join('\n')}\nCall them in run_code.${tools.some((h) => h.active === false) ? " tools.mycelium.activate_skill({ name }) adds a skill's tools to `tools`." : ''}`,
      },
    ],
    structuredContent: { tools },
  }
}
