import { literal, type Word } from './shell-words.js'

/** How a command's options are spelled: which take a value, and how. */
export interface OptionSpec {
  /** Short letters that take a value, attached (`-n5`) or the next word (`-n 5`). */
  short?: string
  /** Short letters whose value, if any, is attached (`-i.bak`, `-l5`): they end the cluster. */
  attached?: string
  /** Long options that take a value: `--user root` (`--user=root` is one word whatever the spec). */
  long?: readonly string[]
  /** Long options that take several values (bwrap `--bind SRC DEST`). */
  arity?: Readonly<Record<string, number>>
  /** Single-dash long options that take a value (gdb `-ex CMD`). */
  dashLong?: readonly string[]
  /** Options may follow operands (GNU argument permutation: `su root -c CMD`). */
  permute?: boolean
}

export interface Scanned {
  /** The options, in order: the name (`-c`, `--command`) and its value, if it takes one. */
  options: Array<{ name: string; value?: Word }>
  /** Without `permute`: where the operands start (the wrapped command). */
  rest: number
  /** The words that are not options (with `permute`, gathered from anywhere). */
  operands: Word[]
}

/**
 * Reads options the way getopt does, from `start`: clusters (`-xvf`),
 * attached values (`-n5`, `--user=x`), `--`. Stops at the first operand
 * unless the spec permutes, and at a dynamic word (what it holds is unknown).
 */
export function scanOptions(words: readonly Word[], start: number, spec: OptionSpec = {}): Scanned {
  const options: Scanned['options'] = []
  const operands: Word[] = []
  let i = start
  for (; i < words.length; i++) {
    const w = words[i]!
    const t = w.text
    const isOption = !w.dynamic && t.startsWith('-') && t.length > 1
    if (!isOption) {
      if (!spec.permute) break
      operands.push(w)
      continue
    }
    if (t === '--') {
      i++
      break
    }
    if (t.startsWith('--') || spec.dashLong?.includes(t)) {
      const eq = t.indexOf('=')
      if (eq !== -1 && t.startsWith('--')) {
        options.push({ name: t.slice(0, eq), value: literal(t.slice(eq + 1)) })
        continue
      }
      const n = spec.arity?.[t] ?? (spec.long?.includes(t) || spec.dashLong?.includes(t) ? 1 : 0)
      options.push(n > 0 && words[i + 1] ? { name: t, value: words[i + 1]! } : { name: t })
      i += n
      continue
    }
    for (let j = 1; j < t.length; j++) {
      const c = t[j]!
      const attached = t.slice(j + 1)
      if (spec.short?.includes(c)) {
        if (attached) options.push({ name: `-${c}`, value: literal(attached) })
        else {
          const next = words[i + 1]
          options.push(next ? { name: `-${c}`, value: next } : { name: `-${c}` })
          i++
        }
        break
      }
      if (spec.attached?.includes(c)) {
        options.push(attached ? { name: `-${c}`, value: literal(attached) } : { name: `-${c}` })
        break
      }
      options.push({ name: `-${c}` })
    }
  }
  operands.push(...words.slice(i))
  return { options, rest: i, operands }
}

/** The value of the last of these options given with one. */
export function optionValue(scanned: Scanned, names: readonly string[]): Word | undefined {
  let found: Word | undefined
  for (const o of scanned.options) if (names.includes(o.name) && o.value) found = o.value
  return found
}

export const hasOption = (scanned: Scanned, names: readonly string[]): boolean =>
  scanned.options.some((o) => names.includes(o.name))
