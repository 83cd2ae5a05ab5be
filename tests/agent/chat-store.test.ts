import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { describe, expect, it } from 'vitest'
import { firstTurns, summaryPair, turnStarts } from '../../src/agent/chat-store.js'

const turn = (n: number): BetaMessageParam[] => [
  { role: 'user', content: `question ${n}` },
  { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'x', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: 'r' }] },
  { role: 'assistant', content: `answer ${n}` },
]

describe('turnStarts / firstTurns: where a conversation’s turns begin', () => {
  it('starts a turn at each plain user message, never at a tool result', () => {
    const conversation = [...turn(1), ...turn(2)]
    expect(turnStarts(conversation)).toEqual([0, 4])
    expect(firstTurns(conversation, 1)).toEqual(turn(1))
    expect(firstTurns(conversation, 5)).toEqual(conversation)
  })

  it('does not count a /compress summary as a turn: it goes with the first turn after it', () => {
    const compressed = [...summaryPair('we did things'), ...turn(3), ...turn(4)]
    expect(turnStarts(compressed)).toEqual([2, 6])
    expect(firstTurns(compressed, 1)).toEqual([...summaryPair('we did things'), ...turn(3)])
    // A user who writes the same words later is a turn like any other.
    const quoting = [
      ...turn(1),
      { role: 'user' as const, content: '(The earlier part of this conversation, summarised:) is what it said' },
    ]
    expect(turnStarts(quoting)).toEqual([0, 4])
  })
})
