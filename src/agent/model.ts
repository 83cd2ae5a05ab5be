/** The model when neither --model, agent.model nor ANTHROPIC_MODEL names one. */
const DEFAULT_MODEL = 'claude-sonnet-5-5'

/** `--model`, else `agent.model` in the config, else ANTHROPIC_MODEL, else the default. */
export function resolveModel(
  flag: string | undefined,
  configured: string | undefined,
  env: Record<string, string | undefined>,
): string {
  return flag || configured || env.ANTHROPIC_MODEL || DEFAULT_MODEL
}
