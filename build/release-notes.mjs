#!/usr/bin/env node
// Prints the CHANGELOG.md section of one version: `node build/release-notes.mjs 1.2.3`.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The body of `## [version]` (or `## version`) up to the next `## ` heading. */
export function releaseNotes(changelog, version) {
  const lines = changelog.split('\n')
  const heading = new RegExp(`^## \\[?${version.replace(/[.]/g, '\\.')}\\]?(\\s|$)`)
  const start = lines.findIndex((l) => heading.test(l))
  if (start === -1) return undefined
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '))
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n').trim()
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const version = process.argv[2]
  const notes = version ? releaseNotes(readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8'), version) : undefined
  if (!notes) {
    process.stderr.write(`CHANGELOG.md has no section for version ${version ?? '(none given)'}: add "## [${version}]" before tagging\n`)
    process.exitCode = 1
  } else process.stdout.write(`${notes}\n`)
}
