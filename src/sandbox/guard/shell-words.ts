/** One word of a command: its literal text when static, or marked dynamic (an expansion). */
export interface Word {
  text: string
  /** True when the word's value is only known at run time ($VAR, $(…), `…`, globs stay static). */
  dynamic: boolean
  /** Commands inside the word ($(…), `…`, <(…)), already extracted. */
  inner: SimpleCommand[]
  /**
   * Set when the value arrives at run time from input (xargs, parallel, `find -exec … {}`).
   * `within`: the paths it is known to lie under (find's roots); absent, it may be anything.
   */
  fromInput?: { within?: readonly string[] }
  /**
   * Every value the word may take, when the guard can tell: a variable set
   * earlier in the script (several values in a loop), brace expansion
   * (`/{etc,usr}` → `/etc`, `/usr`). Absent on a dynamic word: unknown.
   */
  values?: readonly string[]
}

/** A redirection: its target, and whether it appends (`>>`) rather than truncates, or only reads (`< file`). */
export interface Write {
  target: Word
  append: boolean
  read?: boolean
  /** What the command writes there, when the guard can tell (`echo 'x' > f`, `cat > f <<EOF`). */
  content?: string
}

/** A simple command after wrappers are peeled: `sudo env X=1 /bin/rm -rf /` → name `rm`. */
export interface SimpleCommand {
  /** The command name reduced to its base name (`/bin/rm` → `rm`). */
  name: string
  /** The command as written when it names a file by path (`./x.sh`, `/tmp/run`). */
  path?: string
  /** Set when the command runs a program written earlier in the same check, or one read from stdin (`make -f -`). */
  runsWritten?: boolean
  /** The programs the command runs that were written earlier in the same check with a known content: read back as code. */
  runsContent?: string[]
  /** What the command destroys through links made earlier in the same check, as the paths they point to (from the workspace). */
  linked?: Word[]
  nameDynamic: boolean
  args: Word[]
  /** Commands piped into this one (earlier stages of its pipeline). */
  pipedFrom: SimpleCommand[]
  /** Output redirection targets (`> /dev/sda`). */
  writesTo: string[]
  /** The same redirections as words, with how they write. */
  writes?: Write[]
  /** The working directory the command runs in, as the script set it (`cd /`): `.` is the workspace, null unknown. */
  wd?: string | null
  /** The source text, for messages. */
  source: string
  /** The name of the function whose body holds this command, if any. */
  inFunction?: string
  /** The program an interpreter runs, when it can be read: `-c`/`-e` code, a heredoc, a here-string, `echo … |`. */
  program?: string
}

/** What a runner runs in turn: more words to peel, or a script to parse. */
export type Inner = { words: Word[]; input?: Word } | { script: string; positional?: Word[]; input?: Word }

/**
 * What peeling one command gives: whether the command itself is judged too
 * (`find`, `python3 -c`, `sh -c` stay; `sudo`, `xargs`, `strace` vanish), the
 * commands and scripts it runs, and the program an interpreter was handed.
 */
export interface Step {
  keep: boolean
  inner: Inner[]
  program?: string
}
export type Runner = (words: Word[]) => Step | undefined

/** The context a nested script is read in: its stdin, `$0 $1 …`, and what `$__MYC_INPUT__` stands for. */
export interface ScriptContext {
  pipedFrom: SimpleCommand[]
  /** The working directory the script starts in (`.`, the workspace, when absent; null unknown). */
  wd?: string | null
  positional?: Word[]
  input?: Word
}

/** Hooks from the extractor back to the guard: parse a nested script, or give up (fail closed). */
export interface Nesting {
  script(text: string, ctx: ScriptContext): SimpleCommand[]
  /** Words that are one command already (an argv, a shell call found in code), peeled like any command of a script. */
  expand(words: Word[], place: Place): SimpleCommand[]
  tooDeep(source: string): void
}

/** Where a command sits in its script: what feeds it, where it writes, its working directory. */
export interface Place {
  pipedFrom: SimpleCommand[]
  writesTo: string[]
  writes?: Write[]
  wd?: string | null
  source: string
  inFunction?: string
  input?: Word
}

/** Shells: they run what they read. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'yash',
  'posh',
  'rbash',
  'fish',
  'ash',
  'busybox',
  'csh',
  'tcsh',
])
/** Shells and interpreters that run what they read. */
export const INTERPRETERS = new Set([
  ...SHELLS,
  'python',
  'python3',
  'python2',
  'perl',
  'ruby',
  'node',
  'nodejs',
  'bun',
  'php',
  'lua',
  'luajit',
  'Rscript',
  'osascript',
  'pwsh',
])

/**
 * The stand-in for a value that arrives from input: runners write it where the
 * input goes (`xargs -I{} sh -c 'rm {}'` → `rm $__MYC_INPUT__`), and the
 * extractor reads it back as a {@link Word} marked `fromInput`.
 */
export const INPUT_VAR = '__MYC_INPUT__'
export const INPUT_REF = `$${INPUT_VAR}`

/** A word that arrives from input at run time; `within` bounds it to paths under those roots. */
export function inputWord(within?: readonly string[]): Word {
  return { text: INPUT_REF, dynamic: true, inner: [], fromInput: within ? { within } : {} }
}

/** A literal word (an argv element, a string from interpreter code). */
export const literal = (text: string): Word => ({ text, dynamic: false, inner: [] })

export function basename(name: string): string {
  const i = name.lastIndexOf('/')
  return i === -1 ? name : name.slice(i + 1)
}

/** Quotes a literal for a shell: `a b` → `'a b'`. */
export const quote = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`

/**
 * A word's value as a script or program reads it: literal text as it is, a
 * dynamic word with its quoting removed and its expansions left as written
 * (`"rm -rf $DIR"` → `rm -rf $DIR`), an input word as built.
 */
export const asScript = (w: Word): string => (w.dynamic && !w.fromInput ? unquote(w.text) : w.text)
/** Words joined into a script, each kept one word. */
export const joinQuoted = (words: readonly Word[]): string =>
  words.map((w) => (w.dynamic ? w.text : quote(w.text))).join(' ')

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
      out += text
        .slice(i + 2, end === -1 ? undefined : end)
        .replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
        .replace(/\\n/g, '\n')
        .replace(/\\(.)/g, '$1')
      i = end === -1 ? text.length : end + 1
    } else {
      out += c
      i++
    }
  }
  return out
}
