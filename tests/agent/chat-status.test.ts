import { describe, expect, it } from 'vitest'
import { compactCount, statusLine } from '../../src/agent/chat-line.js'

const usage = (inputTokens: number, outputTokens: number, cacheReadInputTokens = 0, cacheCreationInputTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadInputTokens,
  cacheCreationInputTokens,
})

describe("myc chat's status line", () => {
  it('names the role, model, active skills and tokens; the cost only with a price', () => {
    const developer = { role: 'developer', activeSkills: [{ name: 'common' }, { name: 'reader' }] }
    expect(statusLine(developer, true, 'claude-x', usage(1_000, 340, 200), undefined)).toBe(
      'developer · claude-x · skills: common, reader · 1.2k in / 340 out',
    )
    expect(
      statusLine(developer, true, 'claude-x', usage(1_000, 340, 200), { inputPerMTok: 3, outputPerMTok: 15 }),
    ).toBe('developer · claude-x · skills: common, reader · 1.2k in / 340 out · $0.0087')
    expect(
      statusLine({ role: 'developer', activeSkills: [] }, true, 'm', usage(0, 0), {
        inputPerMTok: 3,
        outputPerMTok: 15,
      }),
    ).toBe('developer · m · skills: none · 0 in / 0 out · $0')
    // Open mode has no skills to show.
    expect(
      statusLine({ role: null, activeSkills: [] }, false, 'm', usage(500_000, 20_000), {
        inputPerMTok: 3,
        outputPerMTok: 15,
      }),
    ).toBe('open mode · m · 500k in / 20k out · $1.80')
  })

  it('ends with the budget when the chat has one', () => {
    expect(
      statusLine(
        { role: null, activeSkills: [] },
        false,
        'm',
        usage(10, 5),
        { inputPerMTok: 3, outputPerMTok: 15 },
        'budget $0.05',
      ),
    ).toBe('open mode · m · 10 in / 5 out · $0.0001 · budget $0.05')
    expect(statusLine({ role: null, activeSkills: [] }, false, 'm', usage(10, 5), undefined, 'budget 100 tokens')).toBe(
      'open mode · m · 10 in / 5 out · budget 100 tokens',
    )
  })

  it('counts compactly', () => {
    expect(
      [0, 999, 1_000, 1_249, 9_949, 9_951, 56_400, 999_499, 999_600, 3_400_000, 12_600_000].map(compactCount),
    ).toEqual(['0', '999', '1k', '1.2k', '9.9k', '10k', '56k', '999k', '1M', '3.4M', '13M'])
  })
})
