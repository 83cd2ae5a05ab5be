import { describe, expect, it } from 'vitest'
import { triggeredSkills, triggerMatches } from '../../src/agent/triggers.js'

describe('triggers', () => {
  it.each([
    ['Please review this change', 'review', true],
    ['REVIEW it', 'review', true],
    ['a preview of it', 'review', false],
    ['reviewing', 'review', false],
    ['write_file', 'write', false],
    ['write the file', 'write', true],
    ['コードをレビューしてください', 'レビュー', true],
    ['代码审查一下', '审查', true],
    ['über alles', 'Über', true],
    ['clean up (admin)', 'admin', true],
    ['c++ build', 'c++', true],
    ['anything', '', false],
  ])('%j with %j → %s', (text, trigger, expected) => {
    expect(triggerMatches(text, trigger)).toBe(expected)
  })

  it('names only inactive skills, in order', () => {
    const skills = [
      { name: 'writer', triggers: ['write'], active: false },
      { name: 'reader', triggers: ['read'], active: true },
      { name: 'reviewer', triggers: ['review', 'レビュー'], active: false },
    ]
    expect(triggeredSkills('read, write and review', skills)).toEqual(['writer', 'reviewer'])
    expect(triggeredSkills('nothing here', skills)).toEqual([])
  })
})
