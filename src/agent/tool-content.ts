import type { BetaToolResultBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import type { CallToolResult } from '@modelcontextprotocol/client'
import type { AnthropicSdk } from './anthropic-sdk.js'

type ResultContent = Exclude<BetaToolResultBlockParam['content'], string | undefined>

/**
 * An MCP tool result as tool_result content: each block through the SDK's own
 * MCP helper (text, images, embedded resources, http resource links). What
 * the API cannot take (audio, a link that is not http) becomes a text block
 * that says what it was, instead of failing the turn. Structured content
 * without any content block is given as its JSON.
 */
export function toolResultContent(
  result: CallToolResult,
  sdk: Pick<AnthropicSdk, 'mcpContent' | 'UnsupportedMCPValueError'>,
): ResultContent {
  const { mcpContent, UnsupportedMCPValueError } = sdk
  const out: ResultContent = []
  for (const block of result.content ?? []) {
    try {
      out.push(mcpContent(block as Parameters<typeof mcpContent>[0]) as ResultContent[number])
    } catch (error) {
      if (!(error instanceof UnsupportedMCPValueError)) throw error
      out.push({
        type: 'text',
        text: describeUnsupported(block as { type: string; mimeType?: string; uri?: string; name?: string }),
      })
    }
  }
  if (out.length === 0 && result.structuredContent !== undefined)
    out.push({ type: 'text', text: JSON.stringify(result.structuredContent) })
  return out
}

function describeUnsupported(block: { type: string; mimeType?: string; uri?: string; name?: string }): string {
  if (block.type === 'resource_link')
    return `[resource link: ${block.name ?? ''} ${block.uri ?? ''}]`.replace(/\s+\]/, ']')
  return `[${block.type} content${block.mimeType ? ` (${block.mimeType})` : ''} that the model cannot receive]`
}
