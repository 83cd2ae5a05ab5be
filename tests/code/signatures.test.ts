import { describe, expect, it } from 'vitest'
import { toolSignature, typeScript } from '../../src/code/signatures.js'

describe('a tool’s TypeScript signature from its JSON Schemas', () => {
  it('spells the arguments and the structured value, optional where nothing is required', () => {
    expect(
      toolSignature(
        'fs',
        'read_file',
        { type: 'object', properties: { path: { type: 'string' }, head: { type: 'number' } }, required: ['path'] },
        { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] },
      ),
    ).toBe('tools.fs.read_file(args: { path: string; head?: number }): Promise<{ content: string }>')
    expect(toolSignature('my-server', 'list', { type: 'object' })).toBe(
      'tools["my-server"].list(args?: Record<string, unknown>): Promise<unknown>',
    )
  })

  it('covers enums, constants, unions, arrays, nullable types, maps and odd property names', () => {
    expect(typeScript({ enum: ['a', 'b', 1] }, 0)).toBe('"a" | "b" | 1')
    expect(typeScript({ const: true }, 0)).toBe('true')
    expect(typeScript({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 0)).toBe('string | null')
    expect(typeScript({ type: ['integer', 'null'] }, 0)).toBe('number | null')
    expect(typeScript({ type: 'array', items: { type: 'string' } }, 0)).toBe('string[]')
    expect(typeScript({ type: 'array', items: { type: 'object', properties: { a: {} } } }, 0)).toBe(
      'Array<{ a?: unknown }>',
    )
    expect(typeScript({ type: 'object', additionalProperties: { type: 'number' } }, 0)).toBe(
      '{ [key: string]: number }',
    )
    expect(typeScript({ type: 'object', properties: { 'a-b': { type: 'string' } } }, 0)).toBe('{ "a-b"?: string }')
    expect(
      typeScript({ allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object' }] }, 0),
    ).toBe('{ a?: string } & Record<string, unknown>')
  })

  it('says unknown for what a type cannot say, and stops at a depth', () => {
    expect(typeScript({ $ref: '#/definitions/x' }, 0)).toBe('unknown')
    expect(typeScript(undefined, 0)).toBe('unknown')
    expect(typeScript(false, 0)).toBe('never')
    const deep = {
      type: 'array',
      items: {
        type: 'array',
        items: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'string' } } } },
      },
    }
    expect(typeScript(deep, 0)).toBe('unknown[][][][][]')
  })
})
