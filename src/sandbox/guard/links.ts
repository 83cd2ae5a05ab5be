import { optionValue, scanOptions } from './options.js'
import { valuesOf } from './paths.js'
import { destroyedBy } from './targets.js'
import { pathKey } from './write-then-run.js'
import type { SimpleCommand, Word } from './shell-words.js'

/**
 * Links made in the same command line: `ln -s /etc x; rm -rf x/` empties
 * /etc through x, `ln /etc/passwd p; > p` truncates it. What a later command
 * destroys through such a link is judged where the link points.
 */
export function markLinkedTargets(commands: readonly SimpleCommand[]): void {
  // Link (a path key) → what it points to (path keys), undefined when unknown.
  const links = new Map<string, string[] | undefined>()
  for (const c of commands) {
    const through: Word[] = []
    for (const t of destroyedBy(c)) {
      for (const v of valuesOf(t.word) ?? []) {
        const k = pathKey(v, c.wd)
        if (k === undefined) continue
        for (const [link, to] of links) {
          if (k !== link && !k.startsWith(`${link}/`)) continue
          // `rm x`, `mv x y`: the link itself goes, not what it points to (`rm -rf x/` follows it).
          if (k === link && !/\/\.?$/.test(v) && ['rm', 'unlink', 'mv'].includes(c.name)) continue
          const rest = k.slice(link.length)
          through.push(
            to
              ? { text: `${to[0]}${rest}`, dynamic: false, inner: [], values: to.map((x) => `${x}${rest}`) }
              : { text: '$__link', dynamic: true, inner: [] },
          )
        }
      }
    }
    if (through.length > 0) c.linked = through
    if (c.name === 'ln') record(c, links)
  }
}

/** `ln [-s] TARGET LINK`, `ln -s TARGET` (a link named like the target, here), `ln -t DIR TARGET…`. */
function record(c: SimpleCommand, links: Map<string, string[] | undefined>): void {
  const s = scanOptions(c.args, 0, { short: 'tS', long: ['--target-directory', '--suffix'], permute: true })
  const dir = optionValue(s, ['-t', '--target-directory'])
  const targets = dir || s.operands.length === 1 ? s.operands : s.operands.slice(0, -1)
  const named = dir ? undefined : s.operands.length >= 2 ? s.operands.at(-1) : undefined
  for (const target of targets) {
    const to = valuesOf(target)
    const base = (v: string) => v.replace(/\/+$/, '').split('/').at(-1) ?? v
    const linkValues = named
      ? valuesOf(named)
      : dir
        ? valuesOf(dir)?.map((d) => `${d}/${base(target.text)}`)
        : [base(target.text)]
    for (const l of linkValues ?? []) {
      const link = pathKey(l, c.wd)
      if (link === undefined) continue
      // A relative target is relative to the link's folder.
      const folder = link.includes('/') ? link.slice(0, link.lastIndexOf('/')) : '.'
      const keys = to?.map((v) => pathKey(v.startsWith('/') || v.startsWith('~') ? v : `${folder}/${v}`, '.'))
      links.set(link, keys && keys.every((k) => k !== undefined) ? (keys as string[]) : undefined)
    }
  }
}
