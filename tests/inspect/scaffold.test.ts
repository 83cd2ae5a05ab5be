import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { initProject, packageSchemaFile, schemaReference } from '../../src/inspect/scaffold.js'
import { repoRoot } from '../helpers/fixtures.js'

/** Where an editor built on VS Code's JSON service looks for a config's `$schema`: one starting with "." against the file's folder, else as a URI. */
function editorResolves(configFile: string, $schema: string): string {
  return $schema.startsWith('.') ? path.resolve(path.dirname(configFile), $schema) : new URL($schema).pathname
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>

describe('myc init: a $schema that resolves offline', () => {
  it('points at the package’s own mycelium.schema.json, by a path relative to the config', async () => {
    expect(packageSchemaFile()).toBe(path.join(repoRoot, 'mycelium.schema.json'))
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'myc-init-schema-')), 'project')
    await initProject(dir, { minimal: true })
    const config = path.join(dir, 'mycelium.config.json')
    const { $schema } = readJson(config)
    expect($schema).toMatch(/^\.\.?\//)
    expect(editorResolves(config, String($schema))).toBe(path.join(repoRoot, 'mycelium.schema.json'))
    // The config it wrote is valid against it.
    const validate = new Ajv({ strict: false }).compile(readJson(path.join(repoRoot, 'mycelium.schema.json')))
    expect(validate(readJson(config)), JSON.stringify(validate.errors)).toBe(true)
  })

  it('without a package file (the single executable): a copy beside the config, ./mycelium.schema.json', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-init-copy-'))
    const files = await initProject(dir, { minimal: true, packagedSchema: null })
    expect(files).toContain(path.join(dir, 'mycelium.schema.json'))
    const config = path.join(dir, 'mycelium.config.json')
    expect(readJson(config).$schema).toBe('./mycelium.schema.json')
    expect(readJson(path.join(dir, 'mycelium.schema.json'))).toEqual(
      readJson(path.join(repoRoot, 'mycelium.schema.json')),
    )
  })

  it('schemaReference: ./ or ../ always, forward slashes; a file:// URL where no relative path exists', () => {
    expect(schemaReference('/a/b', '/a/b/mycelium.schema.json')).toBe('./mycelium.schema.json')
    expect(schemaReference('/a/b/c', '/a/pkg/mycelium.schema.json')).toBe('../../pkg/mycelium.schema.json')
    expect(schemaReference('/a', '/a/node_modules/mycelium-agg/mycelium.schema.json')).toBe(
      './node_modules/mycelium-agg/mycelium.schema.json',
    )
    if (process.platform === 'win32')
      expect(schemaReference('C:\\p', 'D:\\m\\mycelium.schema.json')).toBe(
        pathToFileURL('D:\\m\\mycelium.schema.json').href,
      )
  })
})
