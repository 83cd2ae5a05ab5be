import { describe, expect, it } from 'vitest'
import { API_TOOL_NAME, apiToolNames } from '../../src/agent/api-names.js'

describe('tool names the Messages API accepts', () => {
  it('keeps names that fit, rewrites the others deterministically, and maps back', () => {
    const wire = ['fs__read_file', 'fs.read_file', 'fs:read_file', 'db.query-ü', `x.${'a'.repeat(70)}`, 'fs_read_file']
    const names = apiToolNames(wire)
    expect(names.toApi.get('fs__read_file')).toBe('fs__read_file')
    for (const w of wire) {
      const api = names.toApi.get(w)!
      expect(api).toMatch(API_TOOL_NAME)
      expect(names.fromApi.get(api)).toBe(w)
    }
    // fs.read_file would become fs_read_file, which another tool already is: a hash tells them apart.
    expect(names.toApi.get('fs.read_file')).not.toBe('fs_read_file')
    expect(new Set(names.toApi.values()).size).toBe(wire.length)
    // The same list maps the same way every time.
    expect(apiToolNames(wire)).toEqual(names)
  })
})
