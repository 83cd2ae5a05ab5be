#!/usr/bin/env node
// The state check of `npm run lint`: every place myc keeps state is found
// through one registry, src/config/state-roots.ts, which the sandbox hides as
// a whole. Code elsewhere in src/ that builds a path of its own from the home
// folder, the XDG or Windows folders, or myc's state names would keep state
// the sandbox does not know of, so this refuses it. Comments may mention them;
// a line that names one for another reason says so: `// check-state: why`.
import path from 'node:path'
import { codeLines, src, tsFiles } from './lint-src.mjs'

const REGISTRY = path.join('config', 'state-roots.ts')

/** What locates state, and what to use instead. */
const RULES = [
  [/\bhomedir\b/, 'the home folder (homedir)'],
  [/\benv\s*(?:\.\s*HOME\b|\[\s*['"`]HOME['"`]\s*\])/, 'the home folder (env.HOME)'],
  [/\bXDG_[A-Z_]+/, 'an XDG folder'],
  [/\b(?:LOCAL)?APPDATA\b|\bUSERPROFILE\b/, 'a Windows user folder'],
  [/['"`]\.mycelium(?:['"`/\\]|$)/, "the project's state folder (.mycelium)"],
  [
    /\.config[/\\]+mycelium|['"`]\.config['"`]\s*,\s*['"`]mycelium['"`]/,
    "the person's config folder (.config/mycelium)",
  ],
  [/oauth-tokens\.json|oauth-token\.key|['"`]secrets\.json['"`]/, "a sealed store's files"],
]

const problems = []
for (const file of tsFiles(src)) {
  const rel = path.relative(src, file)
  if (rel === REGISTRY) continue
  for (const { number, line, code } of codeLines(file)) {
    if (/\/\/ check-state: \S/.test(line)) continue
    for (const [pattern, what] of RULES)
      if (pattern.test(code))
        problems.push(
          `src/${rel}:${number} locates ${what} itself: find state through src/config/state-roots.ts (add a place there for a new kind), so the sandbox hides it`,
        )
  }
}
for (const p of problems) console.error(`check-state: ${p}`)
if (problems.length) process.exit(1)
console.log('check-state: every place of myc state in src/ is found through config/state-roots.ts')
