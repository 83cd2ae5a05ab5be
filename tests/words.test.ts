import { describe, expect, it } from 'vitest'
import { countOf } from '../src/words.js'

describe('countOf', () => {
  it('says one in the singular, and any other number in the plural', () => {
    expect(countOf(1, 'turn')).toBe('1 turn')
    expect(countOf(0, 'turn')).toBe('0 turns')
    expect(countOf(2, 'turn')).toBe('2 turns')
    expect(countOf(3, 'entry', 'entries')).toBe('3 entries')
  })
})
