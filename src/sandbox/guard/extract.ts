import type { Node } from 'web-tree-sitter'

/** One word of a command: its literal text when static, or marked dynamic (an expansion). */
export interface Word {
  text: string
  /** True when the word's value is only known at run time ($VAR, $(…), `…`, globs stay static). */
  dynamic: boolean
  /** Commands inside the word ($(…), `…`, <(…)), already extracted. */
  inner: SimpleCommand[]
}

/** A simple command after wrappers are peeled: `sudo env X=1 /bin/rm -rf /` → name `rm`. */
export interface SimpleCommand {
  /** The command name reduced to its base name (`/bin/rm` → `rm`). */
  name: string
  nameDynamic: boolean
  args: Word[]
  /** Commands piped into this one (earlier stages of its pipeline). */
  pipedFrom: SimpleCommand[]
  /** Output redirection targets (`> /dev/sda`). */
  writesTo: string[]
  /** The source text, for messages. */
  source: string
  /** The name of the function whose body holds this command, if any. */
  inFunction?: string
}

/** Wrappers whose real command follows; the value says how many option words take an argument. */
const WRAPPERS: Record<string, { optionsWithValue?: string[]; positional?: number }> = {
  sudo: { optionsWithValue: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '--user', '--group'] },
  doas: { optionsWithValue: ['-u', '-C'] },
  env: { optionsWithValue: ['-u', '--unset', '-C', '--chdir', '-S'] },
  command: {},
  exec: { optionsWithValue: ['-a'] },
  builtin: {},
  nice: { optionsWithValue: ['-n', '--adjustment'] },
  ionice: { optionsWithValue: ['-c', '-n', '-p', '--class', '--classdata'] },
  nohup: {},
  setsid: {},
  stdbuf: { optionsWithValue: ['-i', '-o', '-e'] },
  time: {},
  timeout: { optionsWithValue: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  xargs: { optionsWithValue: ['-I', '-i', '-L', '-l', '-n', '-P', '-s', '-d', '-E', '-a', '--max-args', '--max-procs', '--delimiter', '--arg-file'] },
  busybox: {},
  chroot: { positional: 1 },
  unbuffer: {},
  watch: { optionsWithValue: ['-n', '--interval'] },
  flock: { positional: 1 },
}

export function basename(name: string): string {
  const i = name.lastIndexOf('/')
  return i === -1 ? name : name.slice(i + 1)
}

/** Removes shell quoting from a static word: 'a b' → a b, "x" → x, a\ b → a b. */
export function unquote(text: string): string {
  let out = ''
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      out += text.slice(i + 1, end === -1 ? undefined : end)
      i = end === -1 ? text.length : end + 1
    } else if (c === '"') {
      i++
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1]!)) i++
        out += text[i]
        i++
      }
      i++
    } else if (c === '\\' && i + 1 < text.length) {
      out += text[i + 1]
      i += 2
    } else if (c === '$' && text[i + 1] === "'") {
      // ANSI-C quoting: $'…'
      const end = text.indexOf("'", i + 2)
      out += text.slice(i + 2, end === -1 ? undefined : end).replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\\n/g, '\n').replace(/\\(.)/g, '$1')
      i = end === -1 ? text.length : end + 1
    } else {
      out += c
      i++
    }
  }
  return out
}

const DYNAMIC = new Set(['simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion'])

/** Extracts every simple command of a parsed script, nested ones included (substitutions, subshells, functions, pipelines). */
export function extractCommands(root: Node, onNested: (script: string, from: SimpleCommand) => SimpleCommand[]): SimpleCommand[] {
  const out: SimpleCommand[] = []
  let inFunction: string | undefined

  const word = (node: Node): Word => {
    const inner: SimpleCommand[] = []
    let dynamic = DYNAMIC.has(node.type)
    const visit = (n: Node) => {
      if (DYNAMIC.has(n.type)) dynamic = true
      if (n.type === 'command_substitution' || n.type === 'process_substitution') {
        inner.push(...walk(n, []))
        return
      }
      for (const c of n.namedChildren) if (c) visit(c)
    }
    visit(node)
    return { text: dynamic ? node.text : unquote(node.text), dynamic, inner }
  }

  const command = (node: Node, pipedFrom: SimpleCommand[], writesTo: string[]): SimpleCommand[] => {
    const nameNode = node.childForFieldName('name')
    const words: Word[] = []
    if (nameNode) words.push(word(nameNode.namedChildren[0] ?? nameNode))
    for (const c of node.namedChildren) {
      if (!c || c === nameNode || c.type === 'variable_assignment' || c.id === nameNode?.id) continue
      if (c.type === 'file_redirect' || c.type === 'herestring_redirect') continue
      words.push(word(c))
    }
    const nested = words.flatMap((w) => w.inner)
    const peeled = peel(words)
    if (!peeled) return nested
    const cmd: SimpleCommand = { name: basename(peeled[0]!.text), nameDynamic: peeled[0]!.dynamic, args: peeled.slice(1), pipedFrom, writesTo, source: node.text, ...(inFunction !== undefined ? { inFunction } : {}) }
    const result = [cmd, ...nested]
    // Shell strings and eval are scripts of their own.
    const script = shellScript(cmd)
    if (script !== undefined) result.push(...onNested(script, cmd))
    return result
  }

  const walk = (node: Node, pipedFrom: SimpleCommand[], writesTo: string[] = []): SimpleCommand[] => {
    switch (node.type) {
      case 'command':
        return command(node, pipedFrom, writesTo)
      case 'function_definition': {
        const outer = inFunction
        inFunction = node.childForFieldName('name')?.text
        try {
          return node.namedChildren.flatMap((c) => (c ? walk(c, pipedFrom, writesTo) : []))
        } finally {
          inFunction = outer
        }
      }
      case 'pipeline': {
        const found: SimpleCommand[] = []
        let before: SimpleCommand[] = [...pipedFrom]
        for (const stage of node.namedChildren) {
          if (!stage) continue
          const cmds = walk(stage, before)
          found.push(...cmds)
          before = [...before, ...cmds]
        }
        return found
      }
      case 'redirected_statement': {
        const targets: string[] = []
        let heredoc: string | undefined
        const inHeredoc: Node[] = []
        for (const c of node.namedChildren) {
          if (!c) continue
          if (c.type === 'file_redirect') {
            const dest = c.childForFieldName('destination') ?? c.namedChildren.at(-1)
            if (dest) targets.push(unquote(dest.text))
          }
          if (c.type === 'heredoc_redirect') {
            for (const h of c.namedChildren) {
              if (!h) continue
              if (h.type === 'heredoc_body') heredoc = h.text
              else if (h.type !== 'heredoc_start' && h.type !== 'heredoc_end') inHeredoc.push(h)
            }
          }
        }
        const body = node.childForFieldName('body') ?? node.namedChildren[0]
        const cmds = body ? walk(body, pipedFrom, targets) : []
        // `cat <<EOF | sh`: the pipeline hangs off the heredoc in this grammar.
        for (const h of inHeredoc) cmds.push(...walk(h, cmds))
        if (heredoc !== undefined && cmds.some((c) => SHELLS.has(c.name))) cmds.push(...onNested(heredoc, cmds[0]!))
        return cmds
      }
      default: {
        const found: SimpleCommand[] = []
        for (const c of node.namedChildren) if (c) found.push(...walk(c, pipedFrom, writesTo))
        return found
      }
    }
  }

  out.push(...walk(root, []))
  return out
}

/** Shells and interpreters that run what they read. */
export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'busybox'])
export const INTERPRETERS = new Set([...SHELLS, 'python', 'python3', 'python2', 'perl', 'ruby', 'node', 'php', 'lua', 'Rscript', 'osascript', 'pwsh'])

/** The script a command runs from a string: `sh -c STRING`, `eval ARGS`, `bash -lc STRING`. */
function shellScript(cmd: SimpleCommand): string | undefined {
  if (cmd.name === 'eval') return cmd.args.map((a) => a.text).join(' ')
  if (!SHELLS.has(cmd.name)) return undefined
  const i = cmd.args.findIndex((a) => !a.dynamic && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text))
  const script = i === -1 ? undefined : cmd.args[i + 1]
  if (!script) return undefined
  // A dynamic string keeps its quotes in `text`: parse what is inside them.
  return script.dynamic ? script.text.replace(/^"([\s\S]*)"$/, '$1') : script.text
}

/** Peels wrappers (`sudo -u x env A=1 nice -n 5 cmd …`) and returns the real command words; undefined for none. */
export function peel(words: Word[]): Word[] | undefined {
  let rest = words
  for (let depth = 0; depth < 16 && rest.length > 0; depth++) {
    const head = rest[0]!
    if (head.dynamic) return rest
    const name = basename(head.text)
    const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined
    if (!spec) return rest
    let i = 1
    while (i < rest.length) {
      const w = rest[i]!
      if (w.dynamic) break
      if (w.text === '--') {
        i++
        break
      }
      if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text)) {
        i++
        continue
      }
      if (w.text.startsWith('-') && w.text.length > 1) {
        i += spec.optionsWithValue?.includes(w.text) ? 2 : 1
        continue
      }
      break
    }
    i += spec.positional ?? 0
    if (i >= rest.length) return undefined
    rest = rest.slice(i)
  }
  return rest
}
