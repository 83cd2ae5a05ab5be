import { describe, expect, it } from 'vitest'
import { Budget, BudgetReached, budgetCommand, capText, estimateTokens, resolveLimits } from '../../src/agent/budget.js'
import { MycError } from '../../src/errors.js'

const price = { inputPerMTok: 3, outputPerMTok: 15 }

describe('resolveLimits: which cap a run gets', () => {
  it('takes each cap from the flag, else the nearest role of the chain that sets it, else agent.budget', () => {
    const agent = { maxUsd: 5, maxInputTokens: 1_000, maxOutputTokens: 100 }
    expect(resolveLimits({}, agent, [], price)).toEqual(agent)
    // The role's cap wins over agent.budget's, cap by cap; a parent's counts when the role sets none.
    const chain = [
      { name: 'lead', budget: { maxOutputTokens: 50 } },
      { name: 'developer', budget: { maxUsd: 1, maxOutputTokens: 70 } },
    ]
    expect(resolveLimits({}, agent, chain, price)).toEqual({ maxUsd: 1, maxInputTokens: 1_000, maxOutputTokens: 50 })
    // The flags win over both.
    expect(resolveLimits({ maxUsd: 0.25, maxTotalTokens: 900 }, agent, chain, price)).toEqual({
      maxUsd: 0.25,
      maxInputTokens: 1_000,
      maxOutputTokens: 50,
      maxTotalTokens: 900,
    })
    expect(resolveLimits({}, undefined, [{ name: 'guest' }], undefined)).toEqual({})
  })

  it('refuses a cap in USD without a price, naming where it came from and agent.price', () => {
    const fails = (f: () => unknown) => {
      try {
        f()
      } catch (error) {
        expect(error).toBeInstanceOf(MycError)
        expect((error as MycError).code).toBe('usage')
        return (error as Error).message
      }
      throw new Error('did not throw')
    }
    expect(fails(() => resolveLimits({ maxUsd: 1 }, undefined, [], undefined))).toMatch(
      /^--max-budget-usd caps the spend in USD.*set agent\.price/,
    )
    expect(fails(() => resolveLimits({}, { maxUsd: 1 }, [], undefined))).toMatch(
      /^agent\.budget\.maxUsd caps .*agent\.price/,
    )
    expect(fails(() => resolveLimits({}, undefined, [{ name: 'guest', budget: { maxUsd: 1 } }], undefined))).toMatch(
      /^the budget of role "guest" \(budget\.maxUsd\).*agent\.price/,
    )
    // Token caps need no price.
    expect(resolveLimits({ maxTotalTokens: 10 }, { maxOutputTokens: 5 }, [], undefined)).toEqual({
      maxTotalTokens: 10,
      maxOutputTokens: 5,
    })
  })
})

describe('Budget: no request starts that could pass a cap', () => {
  it('lets a request start only when the spend so far plus its estimate stays under every cap', () => {
    const budget = new Budget(price, 'raise it')
    budget.setLimits({ maxTotalTokens: 1_000 })
    expect(budget.refuse(400, 600)).toBeUndefined()
    expect(budget.refuse(401, 600)).toBe(
      'budget reached: spent 0 tokens of the 1000-token cap, and the next request could take up to 1001 (raise it)',
    )
    // Refused once, refused until the caps change.
    expect(budget.refuse(1, 1)).toMatch(/^budget reached/)
    budget.setLimits({ maxTotalTokens: 1_000 })
    budget.add({
      input_tokens: 500,
      output_tokens: 100,
      cache_read_input_tokens: 200,
      cache_creation_input_tokens: 100,
    })
    expect(budget.spent).toEqual({
      inputTokens: 500,
      outputTokens: 100,
      cacheReadInputTokens: 200,
      cacheCreationInputTokens: 100,
    })
    expect(budget.refuse(50, 50)).toBeUndefined()
    expect(budget.refuse(50, 51)).toMatch(/spent 900 tokens of the 1000-token cap/)
  })

  it('counts input (cache reads and writes included) and output separately for their caps', () => {
    const budget = new Budget(undefined, 'x')
    budget.setLimits({ maxInputTokens: 100, maxOutputTokens: 10 })
    budget.add({ input_tokens: 50, cache_read_input_tokens: 30, output_tokens: 5 })
    expect(budget.refuse(20, 5)).toBeUndefined()
    expect(budget.refuse(21, 1)).toMatch(/spent 80 input tokens of the 100 cap, and the next request sends about 21/)
    budget.setLimits({ maxInputTokens: 100, maxOutputTokens: 10 })
    expect(budget.refuse(1, 6)).toMatch(/spent 5 output tokens of the 10 cap, and the next request may write up to 6/)
  })

  it('prices the estimate at the dearer of input and cache writes, and the worst-case output at the output price', () => {
    const budget = new Budget({ inputPerMTok: 3, outputPerMTok: 15, cacheWritePerMTok: 3.75 }, 'x')
    // 1,000 in at $3.75/M + 1,000 out at $15/M = $0.01875.
    budget.setLimits({ maxUsd: 0.01875 })
    expect(budget.refuse(1_000, 1_000)).toBeUndefined()
    budget.setLimits({ maxUsd: 0.0187 })
    expect(budget.refuse(1_000, 1_000)).toBe(
      'budget reached: spent $0 of the $0.0187 cap, and the next request could cost up to $0.01875 (x)',
    )
  })

  it('once the spend reaches a cap, no request starts however small', () => {
    const budget = new Budget(price, 'x')
    budget.setLimits({ maxUsd: 0.000105, maxOutputTokens: 5 })
    budget.add({ input_tokens: 10, output_tokens: 5 })
    expect(budget.costUsd()).toBeCloseTo(0.000105, 9)
    expect(budget.refuse(1, 1)).toMatch(/^budget reached/)
  })

  it('send: a request that does not fit is never made; one that fits is counted', async () => {
    const budget = new Budget(undefined, 'x')
    budget.setLimits({ maxTotalTokens: 100 })
    let calls = 0
    const call = async () => (calls++, { usage: { input_tokens: 30, output_tokens: 20 } })
    const request = { model: 'm', max_tokens: 40, messages: [{ role: 'user', content: 'hi' }] }
    expect(estimateTokens({ model: 'm', messages: request.messages })).toBe(
      Math.ceil(JSON.stringify({ model: 'm', messages: request.messages }).length / 4),
    )
    await budget.send(request, call)
    expect(budget.spent.inputTokens + budget.spent.outputTokens).toBe(50)
    await expect(budget.send(request, call)).rejects.toBeInstanceOf(BudgetReached)
    expect(calls).toBe(1)
  })

  it('usageRecord: what was spent since the last record, priced when a price is set', () => {
    const budget = new Budget(price, 'x')
    budget.add({ input_tokens: 10, output_tokens: 5 })
    expect(budget.usageRecord()).toEqual({
      type: 'usage',
      inputTokens: 10,
      outputTokens: 5,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      costUsd: 0.000105,
    })
    budget.add({ input_tokens: 1, output_tokens: 1 })
    expect(budget.usageRecord()).toMatchObject({ inputTokens: 1, outputTokens: 1 })
    expect(new Budget(undefined, 'x').usageRecord()).not.toHaveProperty('costUsd')
  })
})

describe("chat's /budget and the cap in the status line", () => {
  it('shows, sets in USD or tokens, and removes the caps', () => {
    const budget = new Budget(price, 'x')
    expect(capText({})).toBeUndefined()
    expect(capText({ maxUsd: 0.05, maxTotalTokens: 10_000, maxInputTokens: 5, maxOutputTokens: 6 })).toBe(
      'budget $0.05, 10000 tokens, 5 in, 6 out',
    )
    budget.add({ input_tokens: 10, output_tokens: 5 })
    expect(budgetCommand(budget, '')).toBe(
      'spent 15 tokens, $0.000105; no budget (/budget N sets one in USD, /budget N tokens in tokens, /budget off removes it)',
    )
    expect(budgetCommand(budget, '0.5')).toBe('spent 15 tokens, $0.000105; budget $0.5 for the rest of this chat')
    expect(budget.limits).toEqual({ maxUsd: 0.5 })
    expect(budgetCommand(budget, '$2')).toMatch(/budget \$2 for the rest/)
    expect(budgetCommand(budget, '20000 tokens')).toMatch(/budget 20000 tokens for the rest/)
    expect(budget.limits).toEqual({ maxTotalTokens: 20_000 })
    expect(budgetCommand(budget, 'lots')).toMatch(/^\/budget takes an amount of USD/)
    expect(budgetCommand(budget, '-1')).toMatch(/^\/budget takes/)
    expect(budgetCommand(budget, 'off')).toMatch(/no budget for the rest of this chat/)
    expect(budget.limits).toEqual({})
    // No price: a budget in USD cannot be counted.
    expect(budgetCommand(new Budget(undefined, 'x'), '1')).toMatch(/needs agent\.price/)
  })

  it('lifts a refusal when /budget raises the cap', () => {
    const budget = new Budget(price, 'x')
    budget.setLimits({ maxTotalTokens: 10 })
    expect(budget.refuse(10, 10)).toMatch(/^budget reached/)
    budgetCommand(budget, '1000 tokens')
    expect(budget.refuse(10, 10)).toBeUndefined()
  })
})

describe('the spend in the session file', () => {
  it('records each turn’s usage record, and a loaded session sums tokens and cost', async () => {
    const { mkdtempSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const path = await import('node:path')
    const { ChatRecorder, loadChatRecord } = await import('../../src/agent/chat-store.js')
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-budget-session-'))
    const writer = new ChatRecorder(dir, ChatRecorder.newId())
    writer.append({
      type: 'meta',
      id: writer.id,
      created: new Date().toISOString(),
      role: null,
      mode: 'run',
      model: 'm',
      version: '0',
    })
    const budget = new Budget(price, 'x')
    budget.add({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 4 })
    writer.append(budget.usageRecord())
    budget.add({ input_tokens: 20, output_tokens: 10 })
    writer.append(budget.usageRecord())
    // An older file's record, without cache tokens or cost, still loads.
    writer.append({ type: 'usage', inputTokens: 1, outputTokens: 1 })
    const loaded = loadChatRecord(dir, writer.id)
    expect(loaded.usage).toEqual({
      inputTokens: 31,
      outputTokens: 16,
      costUsd: Math.round(((10 * 3 + 5 * 15 + 4 * 3) / 1e6 + (20 * 3 + 10 * 15) / 1e6) * 1e6) / 1e6,
    })
  })
})
