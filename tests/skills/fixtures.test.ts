import { chmodSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSkills } from '../../src/skills/load-skills.js'
import { repoRoot } from '../helpers/fixtures.js'

const base = path.join(repoRoot, 'tests/fixtures/skills')
const rel = (file: string) => path.relative(base, file)

describe('loadSkills over tests/fixtures/skills', async () => {
  const { skills, problems } = await loadSkills(['mixed', 'more'], { baseDir: base, separator: '__' })
  const byName = new Map(skills.map((s) => [s.name, s]))

  it('loads the good skills and skips the malformed ones, in folder order', () => {
    expect(skills.map((s) => s.name)).toEqual(['both', 'crlf-bom', 'good-md', 'good-yaml'])
  })

  it('reports each problem with the file and the key path', () => {
    expect(problems.map((p) => [rel(p.file), p.path, p.message])).toEqual([
      ['mixed/bad-grants/SKILL.md', 'grants.memoryTeamRoles.1', 'expected a string, got 7 (quote it: "7")'],
      ['mixed/bad-roles/SKILL.yaml', 'allowedRoles', 'expected a list of strings (or one string), got Object'],
      ['mixed/bad-tools/SKILL.md', 'allowedTools.1', 'expected string, got Object'],
      ['mixed/both/SKILL.yaml', '', 'ignored: SKILL.md in the same folder takes precedence (delete one of them)'],
      [
        'mixed/name-mismatch/SKILL.md',
        'name',
        '"something-else" must equal the folder name "name-mismatch" (rename one of them)',
      ],
      [
        'more/good-md/SKILL.md',
        'name',
        `a skill named "good-md" was already loaded from ${path.join(base, 'mixed/good-md/SKILL.md')}; this one is skipped (rename one)`,
      ],
    ])
  })

  it('reads every key of a complete SKILL.md, splitting allowed-tools into patterns and host tools', () => {
    expect(byName.get('good-md')).toMatchObject({
      description: 'A complete skill with every key.',
      license: 'Apache-2.0',
      metadata: { owner: 'platform', version: '1.2' },
      allowedTools: ['memory:search_nodes', 'fs:read_text_file', 'fs__list_directory'],
      hostTools: ['Read'],
      allowedRoles: ['developer', '*'],
      triggers: ['read', '読む'],
      grants: { memory: 'team', memoryTeamRoles: ['developer', 'reviewer'] },
      protected: true,
      instructions: '# Good\n\nRead things.',
    })
  })

  it('keeps the front matter text exactly as written', () => {
    const text = readFileSync(path.join(base, 'mixed/good-md/SKILL.md'), 'utf8')
    const fm = byName.get('good-md')!.frontmatter
    expect(text.startsWith(`---\n${fm}\n---\n`)).toBe(true)
    expect(byName.get('good-yaml')!.frontmatter).toBe(
      readFileSync(path.join(base, 'mixed/good-yaml/SKILL.yaml'), 'utf8'),
    )
  })

  it('reads SKILL.yaml with id for name, one-string lists, and no body', () => {
    expect(byName.get('good-yaml')).toMatchObject({
      name: 'good-yaml',
      allowedRoles: ['*'],
      allowedTools: ['fs:*'],
      instructions: '',
      file: path.join(base, 'mixed/good-yaml/SKILL.yaml'),
    })
  })

  it('takes SKILL.md over SKILL.yaml, and reads CRLF files with a byte order mark', () => {
    expect(byName.get('both')!.description).toBe('The Markdown one wins.')
    expect(byName.get('crlf-bom')).toMatchObject({
      description: 'Windows line ends and a byte order mark.',
      instructions: 'Body line.',
    })
  })
})

describe('loadSkills: more failure shapes', () => {
  const tree = (files: Record<string, string>) => {
    const root = mkdtempSync(path.join(tmpdir(), 'myc-skills-'))
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, p)), { recursive: true })
      writeFileSync(path.join(root, p), text)
    }
    return root
  }

  it.each([
    ['a name over 64 characters', `name: ${'a'.repeat(65)}\ndescription: d`, 'a'.repeat(65), 'name', /1-64 lowercase/],
    ['a double hyphen', 'name: a--b\ndescription: d', 'a--b', 'name', /single hyphens/],
    ['an empty description', 'name: x\ndescription: ""', 'x', 'description', /must not be empty/],
    ['name and id that differ', 'name: x\nid: y\ndescription: d', 'x', 'id', /either name or id/],
    ['protected not a boolean', 'name: x\ndescription: d\nprotected: "yes"', 'x', 'protected', /expected boolean/],
    ['a list where a mapping belongs', '- name: x', 'x', '(front matter)', /must be a YAML mapping/],
    ['duplicate keys', 'name: x\nname: x\ndescription: d', 'x', '(front matter)', /invalid YAML/],
  ])('reports %s', async (_what, fm, folder, keyPath, message) => {
    const root = tree({ [`skills/${folder}/SKILL.md`]: `---\n${fm}\n---\n` })
    const { skills, problems } = await loadSkills(['skills'], { baseDir: root, separator: '__' })
    expect(skills).toEqual([])
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({ file: path.join(root, `skills/${folder}/SKILL.md`), path: keyPath })
    expect(problems[0]!.message).toMatch(message)
  })

  it('reports a skills folder that is a file, and keeps loading the others', async () => {
    const root = tree({ notadir: 'x', 'skills/ok/SKILL.yaml': 'name: ok\ndescription: d\n' })
    const { skills, problems } = await loadSkills(['notadir', 'skills'], { baseDir: root, separator: '__' })
    expect(skills.map((s) => s.name)).toEqual(['ok'])
    expect(problems).toEqual([
      {
        file: path.join(root, 'notadir'),
        path: '',
        message: expect.stringMatching(/^cannot read the skills folder: ENOTDIR/),
      },
    ])
  })

  it('accepts absolute skills folders', async () => {
    const root = tree({ 'elsewhere/abs/SKILL.yaml': 'name: abs\ndescription: d\n' })
    const { skills } = await loadSkills([path.join(root, 'elsewhere')], { baseDir: '/nonexistent', separator: '__' })
    expect(skills.map((s) => s.name)).toEqual(['abs'])
  })

  it.skipIf(process.getuid?.() === 0)('reports a skill file it cannot read', async () => {
    const root = tree({ 'skills/locked/SKILL.md': '---\nname: locked\ndescription: d\n---\n' })
    chmodSync(path.join(root, 'skills/locked/SKILL.md'), 0)
    const { problems } = await loadSkills(['skills'], { baseDir: root, separator: '__' })
    expect(problems[0]!.message).toMatch(/cannot read the skill file/)
  })
})
