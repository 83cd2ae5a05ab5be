import type AnthropicClient from '@anthropic-ai/sdk'
import type { mcpContent, UnsupportedMCPValueError } from '@anthropic-ai/sdk/helpers/beta/mcp'
import { lazyEmbedded } from '../embedded-module.js'

/** What myc uses of @anthropic-ai/sdk. */
export interface AnthropicSdk {
  Anthropic: typeof AnthropicClient
  mcpContent: typeof mcpContent
  UnsupportedMCPValueError: typeof UnsupportedMCPValueError
}

/**
 * Loads the Anthropic SDK on first use. Built, it is a gzipped file beside
 * the bundle (build/embedded-libraries.mjs) compiled only here: 1.5 MB of
 * SDK code parsed on every start (even by `myc --version`) cost ~25 ms, for
 * commands that never talk to the model.
 */
export const loadAnthropicSdk: () => Promise<AnthropicSdk> = lazyEmbedded('anthropic-sdk', async () => {
  const [sdk, mcp] = await Promise.all([import('@anthropic-ai/sdk'), import('@anthropic-ai/sdk/helpers/beta/mcp')])
  return {
    Anthropic: sdk.default,
    mcpContent: mcp.mcpContent,
    UnsupportedMCPValueError: mcp.UnsupportedMCPValueError,
  }
})
