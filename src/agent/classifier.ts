import type Anthropic from '@anthropic-ai/sdk'

/** What the classifier needs of the run's budget (src/agent/budget.ts): its request is one of the run's. */
interface BudgetSend {
  send<
    Q extends { max_tokens: number },
    R extends {
      usage?:
        | {
            input_tokens?: number | null
            output_tokens?: number | null
            cache_read_input_tokens?: number | null
            cache_creation_input_tokens?: number | null
          }
        | undefined
    },
  >(
    request: Q,
    call: (request: Q) => Promise<R>,
  ): Promise<R>
}

/**
 * Asks a small model which of the skills fit the task, from their names and
 * descriptions; used when no trigger matched. Answers only names it was
 * given (anything else the model says is ignored); an error means none,
 * and so does a request the run's budget refuses (the run's own first
 * request is then refused too, and the run ends `budget`). Its tokens are
 * counted at the run's price: an overestimate for a smaller model.
 */
export async function classifySkills(
  client: Pick<Anthropic, 'messages'>,
  model: string,
  task: string,
  skills: ReadonlyArray<{ name: string; description: string }>,
  signal?: AbortSignal,
  budget?: BudgetSend,
): Promise<string[]> {
  if (skills.length === 0) return []
  const list = skills.map((s) => `- ${s.name}: ${s.description}`).join('\n')
  try {
    const request = {
      model,
      max_tokens: 200,
      system:
        'You pick the skills an agent needs for a task. Answer with a JSON array of skill names from the list, and nothing else. Answer [] when none fits.',
      messages: [{ role: 'user' as const, content: `Skills:\n${list}\n\nTask: ${task}` }],
    }
    const create = (r: typeof request) => client.messages.create(r, signal ? { signal } : {})
    const message = budget ? await budget.send(request, create) : await create(request)
    const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    const match = /\[[\s\S]*\]/.exec(text)
    const names = match ? (JSON.parse(match[0]) as unknown) : []
    const known = new Set(skills.map((s) => s.name))
    return Array.isArray(names)
      ? [...new Set(names.filter((n): n is string => typeof n === 'string' && known.has(n)))]
      : []
  } catch {
    return []
  }
}

/** A run's cost in USD from its usage and the configured price; undefined without a price. */
export function costUsd(
  usage: { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number },
  price:
    | {
        inputPerMTok: number
        outputPerMTok: number
        cacheReadPerMTok?: number | undefined
        cacheWritePerMTok?: number | undefined
      }
    | undefined,
): number | undefined {
  if (!price) return undefined
  const perToken = (perMTok: number) => perMTok / 1_000_000
  const total =
    usage.inputTokens * perToken(price.inputPerMTok) +
    usage.outputTokens * perToken(price.outputPerMTok) +
    usage.cacheReadInputTokens * perToken(price.cacheReadPerMTok ?? price.inputPerMTok) +
    usage.cacheCreationInputTokens * perToken(price.cacheWritePerMTok ?? price.inputPerMTok)
  return Math.round(total * 1e6) / 1e6
}
