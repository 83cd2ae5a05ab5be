import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSkills } from '../../src/skills/load-skills.js'
import { repoRoot } from '../helpers/fixtures.js'

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'myc-skills-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    writeFileSync(path.join(root, rel), text)
  }
  return root
}
const md = (fm: string, body = 'Body.') => `---\n${fm}\n---\n${body}\n`
const load = (root: string) => loadSkills(['skills'], { baseDir: root, separator: '__' })

describe('loadSkills', () => {
  it('loads SKILL.md with front matter verbatim and the body as instructions', async () => {
    const fm =
      'name: review\ndescription: Review code\nallowedRoles: [dev]\nallowedTools: [git:diff, "fs:read_*"]\ntriggers: [review, レビュー]\ngrants: { memory: isolated }\nmetadata: { owner: team-a }\nlicense: MIT'
    const root = tree({ 'skills/review/SKILL.md': md(fm, '# Review\n\nSteps.') })
    const { skills, problems } = await load(root)
    expect(problems).toEqual([])
    expect(skills[0]).toMatchObject({
      name: 'review',
      description: 'Review code',
      allowedRoles: ['dev'],
      allowedTools: ['git:diff', 'fs:read_*'],
      triggers: ['review', 'レビュー'],
      grants: { memory: 'isolated', memoryTeamRoles: [] },
      metadata: { owner: 'team-a' },
      license: 'MIT',
      instructions: '# Review\n\nSteps.',
      frontmatter: fm,
      dir: path.join(root, 'skills', 'review'),
    })
  })

  it('loads SKILL.yaml and accepts id for name', async () => {
    const root = tree({
      'skills/lint/SKILL.yaml': 'id: lint\ndescription: Lint\nallowedRoles: [dev]\nallowedTools: [fs:list]\n',
    })
    const { skills } = await load(root)
    expect(skills.map((s) => [s.name, s.instructions])).toEqual([['lint', '']])
  })

  it('reads allowed-tools: Mycelium patterns become allowedTools, host tools are kept apart', async () => {
    const root = tree({
      'skills/mixed/SKILL.md': md(
        'name: mixed\ndescription: d\nallowed-tools: Read Bash(git:*) fs:read_file fs__list *',
      ),
    })
    const [s] = (await load(root)).skills
    expect(s!.allowedTools).toEqual(['fs:read_file', 'fs__list', '*'])
    expect(s!.hostTools).toEqual(['Read', 'Bash(git:*)'])
  })

  it('splits allowed-tools on commas and spaces, not inside parentheses (Read, Bash(git add:*))', async () => {
    const root = tree({
      'skills/commas/SKILL.md': md(
        'name: commas\ndescription: d\nallowed-tools: "Read, Bash(git add:*),fs:read_file ,Grep"',
      ),
    })
    const [s] = (await load(root)).skills
    expect(s!.allowedTools).toEqual(['fs:read_file'])
    expect(s!.hostTools).toEqual(['Read', 'Bash(git add:*)', 'Grep'])
  })

  it.each([
    ['no front matter', 'just text', /must start with YAML front matter/, '(front matter)'],
    ['bad YAML', md('name: [x'), /invalid YAML/, '(front matter)'],
    ['name differs from folder', md('name: other\ndescription: d'), /"other" must equal the folder name "bad"/, 'name'],
    ['upper-case name', md('name: Bad\ndescription: d'), /lowercase/, 'name'],
    ['missing description', md('name: bad'), /missing: add "description:"/, 'description'],
    ['description too long', md(`name: bad\ndescription: ${'x'.repeat(1025)}`), /at most 1024/, 'description'],
    ['unknown key', md('name: bad\ndescription: d\nallowedTool: [fs:x]'), /unknown key "allowedTool"/, 'allowedTool'],
    ['bad memory grant', md('name: bad\ndescription: d\ngrants: { memory: everything }'), /expected/, 'grants.memory'],
    [
      'metadata not strings',
      md('name: bad\ndescription: d\nmetadata: { n: 1 }'),
      /expected a string, got 1 \(quote it: "1"\)/,
      'metadata.n',
    ],
  ])('reports %s with the file and key path, and skips only that skill', async (_name, text, message, keyPath) => {
    const root = tree({ 'skills/bad/SKILL.md': text, 'skills/good/SKILL.md': md('name: good\ndescription: fine') })
    const { skills, problems } = await load(root)
    expect(skills.map((s) => s.name)).toEqual(['good'])
    expect(problems).toHaveLength(1)
    expect(problems[0]!.file).toBe(path.join(root, 'skills/bad/SKILL.md'))
    expect(problems[0]!.path).toBe(keyPath)
    expect(problems[0]!.message).toMatch(message)
  })

  it('skips a second skill of the same name from a later folder', async () => {
    const root = tree({
      'a/x/SKILL.md': md('name: x\ndescription: first'),
      'b/x/SKILL.md': md('name: x\ndescription: second'),
    })
    const { skills, problems } = await loadSkills(['a', 'b'], { baseDir: root, separator: '__' })
    expect(skills.map((s) => s.description)).toEqual(['first'])
    expect(problems[0]!.message).toMatch(/already loaded/)
  })

  it('treats a missing folder as no skills', async () => {
    expect(await loadSkills(['nope'], { baseDir: tree({}), separator: '__' })).toEqual({ skills: [], problems: [] })
  })

  it('loads the bundled templates without a problem', async () => {
    const { skills, problems } = await loadSkills(['skills'], { baseDir: repoRoot, separator: '__' })
    expect(problems).toEqual([])
    expect(skills.map((s) => s.name)).toEqual([
      'admin-access',
      'code-reviewer',
      'common',
      'editor',
      'git-workflow',
      'reader',
      'test-runner',
    ])
  })
})
