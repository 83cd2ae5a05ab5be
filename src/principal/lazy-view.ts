import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import { BUILTIN_SERVER } from '../policy/policy.js'
import type { ToolEntry } from '../registry/catalogue.js'
import { toWireName, type WireNameOptions } from '../registry/wire-names.js'
import { oneLine, rankTools } from './tool-search.js'
import { openView, type PrincipalView } from './view.js'

/*
 * Lazy open mode (`session.lazyTools`, docs/tokens.md): an open config's
 * sessions list two tools instead of every child's. `search_tools` finds a
 * tool by what it does and returns its input schema; `call_tool` calls it.
 * Every child tool stays callable by its own wire name too: nothing is
 * hidden, only not listed. Same rule as the meta tools: one sentence each.
 */
const LAZY_TOOL_DEFS = {
  search_tools: {
    description: 'Finds tools by what they do; returns each one’s name, description and input schema.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer' } },
      required: ['query'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  call_tool: {
    description: 'Calls a tool search_tools found, by name, with its arguments.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string' }, arguments: { type: 'object' } },
      required: ['name'],
    },
  },
} satisfies Record<string, Omit<Tool, 'name'>>

const DEFAULT_LIMIT = 5
const MAX_LIMIT = 20

/** Open mode that lists only `search_tools` and `call_tool` over `catalogueTools`. */
export function lazyOpenView(catalogueTools: () => readonly ToolEntry[], naming: WireNameOptions): PrincipalView {
  const searchName = toWireName(BUILTIN_SERVER, 'search_tools', naming)
  const callName = toWireName(BUILTIN_SERVER, 'call_tool', naming)
  const builtins: Tool[] = [
    { name: searchName, ...LAZY_TOOL_DEFS.search_tools },
    { name: callName, ...LAZY_TOOL_DEFS.call_tool },
  ]
  const search = (args: Record<string, unknown>): CallToolResult => {
    const query = typeof args.query === 'string' ? args.query : ''
    if (query.trim() === '') return errorText(`${searchName} needs "query": words for what the tool should do`)
    const limit =
      typeof args.limit === 'number' && Number.isInteger(args.limit)
        ? Math.min(MAX_LIMIT, Math.max(1, args.limit))
        : DEFAULT_LIMIT
    const entries = new Map(catalogueTools().map((e) => [e.wireName, e]))
    const docs = [...entries.values()].map((e) => ({
      name: e.wireName,
      description: oneLine(e.def.description ?? ''),
      skills: [],
      active: true,
    }))
    const tools = rankTools(docs, query, limit).map((h) => ({
      name: h.name,
      description: h.description,
      inputSchema: entries.get(h.name)!.def.inputSchema,
    }))
    const lines = tools.map((t) => `- ${t.name}: ${t.description}\n  input: ${JSON.stringify(t.inputSchema)}`)
    return {
      content: [
        {
          type: 'text',
          text:
            lines.length > 0
              ? `${lines.join('\n')}\nCall one with ${callName}.`
              : 'No tool matches those words; try others.',
        },
      ],
      structuredContent: { tools },
    }
  }
  return {
    ...openView(),
    listsChildTools: false,
    builtinTools: () => builtins,
    callBuiltin: (wireName, args) => (wireName === searchName ? Promise.resolve(search(args)) : undefined),
    unwrapCall: (wireName, args) => {
      if (wireName !== callName) return undefined
      const { name, arguments: inner } = args
      if (typeof name !== 'string' || name === '')
        return { error: `${callName} needs "name": a tool's name as ${searchName} gives it` }
      if (name === callName) return { error: `${callName} cannot call itself` }
      if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner)))
        return { error: `${callName}: "arguments" must be an object of the tool's arguments` }
      return { name, arguments: (inner ?? {}) as Record<string, unknown> }
    },
  }
}

function errorText(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}
