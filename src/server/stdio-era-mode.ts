import type { Era } from '../protocol/facts.js'

/**
 * Which protocol eras `myc serve` answers on stdio (`--era`): `auto` decides
 * per connection from its first message, `legacy` serves the 2025 era only
 * (2026 requests are unknown methods, as to a 2025 server), `modern` serves
 * 2026-07-28 only (initialize is refused).
 */
export type StdioEraMode = 'auto' | Era

export const STDIO_ERA_MODES: readonly StdioEraMode[] = ['auto', 'legacy', 'modern']
