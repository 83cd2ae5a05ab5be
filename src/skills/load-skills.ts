import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { buildSkill, splitFrontMatter, type Skill, type SkillProblem } from '../policy/skill-definition.js'

/** What loading the skill folders found. */
export interface LoadedSkills {
  skills: Skill[]
  /** Malformed skills (skipped) and unreadable folders. */
  problems: SkillProblem[]
}

/**
 * Loads every `<dir>/<name>/SKILL.md` (or `SKILL.yaml`) below the given
 * folders. A malformed skill is reported with its file and key path and
 * skipped; the rest still load. A later folder's skill of the same name is
 * reported and skipped. Folders that do not exist are skipped silently
 * (a missing default `skills/` is normal). Subfolders without a skill file
 * are not skills and are passed over; when both SKILL.md and SKILL.yaml
 * exist, SKILL.md wins and the YAML file is reported. Relative `dirs`
 * resolve against `baseDir` (the config file's folder). Skills come out in
 * folder order, then name order.
 */
export async function loadSkills(
  dirs: readonly string[],
  options: { baseDir: string; separator: string },
): Promise<LoadedSkills> {
  const skills: Skill[] = []
  const problems: SkillProblem[] = []
  const seen = new Map<string, string>()
  for (const dir of dirs) {
    const root = path.resolve(options.baseDir, dir)
    let entries: string[]
    try {
      entries = (await readdir(root, { withFileTypes: true }))
        .filter((e) => e.isDirectory() || e.isSymbolicLink())
        .map((e) => e.name)
        .sort()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        problems.push({ file: root, path: '', message: `cannot read the skills folder: ${(error as Error).message}` })
      continue
    }
    for (const folder of entries) {
      const folderPath = path.join(root, folder)
      const md = path.join(folderPath, 'SKILL.md')
      const yml = path.join(folderPath, 'SKILL.yaml')
      const hasMd = await isFile(md)
      const hasYml = await isFile(yml)
      const file = hasMd ? md : hasYml ? yml : undefined
      if (!file) continue
      if (hasMd && hasYml)
        problems.push({
          file: yml,
          path: '',
          message: 'ignored: SKILL.md in the same folder takes precedence (delete one of them)',
        })
      const result = await readSkill(file, folder, folderPath, options.separator)
      if (!result.ok) {
        problems.push(...result.problems)
        continue
      }
      const earlier = seen.get(result.skill.name)
      if (earlier) {
        problems.push({
          file,
          path: 'name',
          message: `a skill named "${result.skill.name}" was already loaded from ${earlier}; this one is skipped (rename one)`,
        })
        continue
      }
      seen.set(result.skill.name, file)
      skills.push(result.skill)
    }
  }
  return { skills, problems }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile()
  } catch {
    return false
  }
}

async function readSkill(file: string, folder: string, dir: string, separator: string) {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    return {
      ok: false as const,
      problems: [
        { file, path: '', message: `cannot read the skill file: ${(error as Error).message} (check its permissions)` },
      ],
    }
  }
  let frontmatter: string
  let body: string
  if (file.endsWith('.yaml')) {
    frontmatter = text
    body = ''
  } else {
    const split = splitFrontMatter(text)
    if (!split)
      return {
        ok: false as const,
        problems: [
          {
            file,
            path: '(front matter)',
            message:
              'SKILL.md must start with YAML front matter between --- lines (name, description, allowedRoles, allowedTools)',
          },
        ],
      }
    ;({ frontmatter, body } = split)
  }
  let data: unknown
  try {
    data = parseYaml(frontmatter)
  } catch (error) {
    return {
      ok: false as const,
      problems: [{ file, path: '(front matter)', message: `invalid YAML: ${(error as Error).message.split('\n')[0]}` }],
    }
  }
  return buildSkill(data, { file, dir, folder, frontmatter, body, separator })
}
