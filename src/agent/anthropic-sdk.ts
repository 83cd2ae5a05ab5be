import type AnthropicClient from '@anthropic-ai/sdk'
import type { mcpContent, UnsupportedMCPValueError } from '@anthropic-ai/sdk/helpers/beta/mcp'
import { lazyEmbedded } from '../embedded-module.js'

/** What myc uses of @anthropic-ai/sdk. */
export interface AnthropicSdk {
  Anthropic: typeof AnthropicClient
  mcpContent: typeof mcpContent
  UnsupportedMCPValueError: typeof UnsupportedMCPValueError
}

/** The SDK's own bundle, gzipped and base64, inside build/myc-main.cjs (esbuild.config.mjs); absent when run from source. */
declare const __MYC_ANTHROPIC_SDK__: string | undefined

/**
 * Loads the Anthropic SDK on first use. In the bundle it travels gzipped and
 * is compiled only here: 1.5 MB of SDK code parsed on every start (even by
 * `myc --version`) cost ~25 ms, for commands that never talk to the model.
 */
export const loadAnthropicSdk: () => Promise<AnthropicSdk> = lazyEmbedded(
  'anthropic-sdk',
  typeof __MYC_ANTHROPIC_SDK__ === 'string' ? __MYC_ANTHROPIC_SDK__ : undefined,
  async () => {
    const [sdk, mcp] = await Promise.all([import('@anthropic-ai/sdk'), import('@anthropic-ai/sdk/helpers/beta/mcp')])
    return {
      Anthropic: sdk.default,
      mcpContent: mcp.mcpContent,
      UnsupportedMCPValueError: mcp.UnsupportedMCPValueError,
    }
  },
)
