// What the line checks of `npm run lint` share: where the repo and its src/ are (MYC_LINT_ROOT
// points a check at a tree of its own, for its tests), its .ts files, and
// the code on each of their lines with comments left out.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

export const root = process.env.MYC_LINT_ROOT ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
export const src = path.join(root, 'src')

/** Every .ts file under `dir`, at any depth. */
export const tsFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  )

/** A file's lines of code, each with its number and whole text: comment lines skipped, `code` without a trailing `// ` comment. */
export function codeLines(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, i) => {
      const trimmed = line.trimStart()
      if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) return []
      return [{ number: i + 1, line, code: line.replace(/\s\/\/\s.*$/, '') }]
    })
}
