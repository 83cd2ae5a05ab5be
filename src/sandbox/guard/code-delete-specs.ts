import type { Syntax } from './code-strings.js'

/**
 * A call in interpreter code that deletes, moves away or overwrites a path.
 * `pick`: which positional arguments are paths (default the first; `all`
 * every one). `receiver`: the path is what the method is called on
 * (`Path(p).unlink()`). `mode`: the call writes only when this argument
 * (by position, or keyword) says so (`open(p, 'w')`); a mode that is not a
 * literal counts as writing. `perlOpen`: Perl's `open FH, MODE, PATH` or
 * `open FH, ">PATH"`.
 */
export interface Deleter {
  re: RegExp
  pick?: readonly number[]
  all?: boolean
  receiver?: boolean
  mode?: { index: number; kw?: string; writes: RegExp }
  perlOpen?: boolean
}

export interface DeleteSpec {
  syntax: Syntax
  bare: boolean
  deleters: (code: string) => Deleter[]
  /** Deleting functions used as values (`d = shutil.rmtree`, `{ rmSync: r }`, `map(os.remove, …)`): called unseen. */
  references?: RegExp
  /** Calls that run code given as a string. */
  evals: RegExp
  /** Calls that pick a function or module by a name computed at run time. */
  lookups: RegExp
}

const WRITES = /[wa+]/
const PY_FUNCS = 'remove|unlink|rmdir|rmtree|removedirs|truncate|rename|renames|replace|move'

/** `import shutil as s`, `from shutil import rmtree as r`: the names code reaches the deleting functions by. */
function pythonAliases(code: string): Deleter[] {
  const modules = [...code.matchAll(/\bimport\s+(?:os|shutil)\s+as\s+(\w+)/g)].map((m) => m[1]!)
  const funcs = [...code.matchAll(new RegExp(`\\b(?:${PY_FUNCS})\\s+as\\s+(\\w+)`, 'g'))].map((m) => m[1]!)
  const imported = /\bfrom\s+(?:os|shutil)\b[^\n;]*\bimport\b/.test(code)
  return [
    ...(modules.length > 0
      ? [{ re: new RegExp(`\\b(?:${modules.join('|')})\\s*\\.\\s*(?:${PY_FUNCS})\\s*(?=\\()`, 'g'), pick: [0, 1] }]
      : []),
    ...(funcs.length > 0
      ? [{ re: new RegExp(`(?<![\\w.])(?:${funcs.join('|')})\\s*(?=\\()`, 'g'), pick: [0, 1] }]
      : []),
    ...(imported ? [{ re: new RegExp(`(?<![\\w.])(?:${PY_FUNCS})\\s*(?=\\()`, 'g'), pick: [0, 1] }] : []),
  ]
}

export const DELETE_SPECS: Record<string, DeleteSpec> = {
  python: {
    syntax: 'python',
    bare: false,
    deleters: (code) => [
      { re: /\b(?:rmtree|removedirs)\s*(?=\()/g },
      { re: /\bos\s*\.\s*(?:remove|unlink|rmdir|truncate)\s*(?=\()/g },
      { re: /\bos\s*\.\s*(?:rename|renames|replace)\s*(?=\()|\bshutil\s*\.\s*move\s*(?=\()/g, pick: [0, 1] },
      { re: /\bshutil\s*\.\s*(?:copy|copy2|copyfile|copytree)\s*(?=\()/g, pick: [1] },
      { re: /\)\s*\.\s*(?:remove|unlink|rmdir|rmtree|removedirs)\s*(?=\(\s*[^\s)])/g },
      // `o = os; o.remove('/etc/x')`: any such method handed a literal path.
      { re: /\.\s*(?:remove|unlink|rmdir|removedirs)\s*(?=\(\s*\u0001)/g },
      { re: /\.\s*(?:unlink|rmdir|write_text|write_bytes)\s*(?=\()/g, receiver: true },
      { re: /(?<![\w.])(?:io\s*\.\s*)?open\s*(?=\()/g, mode: { index: 1, kw: 'mode', writes: WRITES } },
      ...pythonAliases(code),
    ],
    references: /\b(?:rmtree|removedirs)\b(?!\s*\()|\bos\s*\.\s*(?:remove|unlink|rmdir|rename|replace)\b(?!\s*\()/g,
    evals: /\b(?:exec|eval|compile|run_path|run_module)\s*(?=\()/g,
    lookups: /\b(?:__import__|import_module|getattr)\s*(?=\()/g,
  },
  node: {
    syntax: 'node',
    bare: false,
    deleters: () => [
      {
        re: /(?:\.\s*|(?<![\w.$]))(?:rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink|rimraf|rimrafSync|removeSync|writeFileSync|writeFile|truncateSync|truncate|createWriteStream)\s*(?=\()/g,
      },
      { re: /(?:\.\s*|(?<![\w.$]))(?:openSync|open)\s*(?=\()/g, mode: { index: 1, writes: WRITES } },
      { re: /(?:\.\s*|(?<![\w.$]))(?:renameSync|rename|moveSync|move)\s*(?=\()/g, pick: [0, 1] },
      { re: /(?:\.\s*|(?<![\w.$]))(?:copyFileSync|copyFile|cpSync|copySync)\s*(?=\()|\.\s*cp\s*(?=\()/g, pick: [1] },
    ],
    references:
      /\b(?:rmSync|rmdirSync|unlinkSync|rimraf)\b(?=\s*[:;)\n]|\s*$)|\.\s*(?:rm|unlink|rmdir)\b(?=\s*[;)\n]|\s*$)|\b(?:rmSync|rmdirSync|unlinkSync|rm|unlink|rmdir)\s*:/g,
    evals: /\b(?:eval|Function|runInThisContext|runInNewContext|runInContext|compileFunction)\s*(?=\()/g,
    lookups: /\b(?:require|import)\s*(?=\()|\w\s*\[[^\]]*\]\s*(?=\()/g,
  },
  perl: {
    syntax: 'perl',
    bare: true,
    deleters: () => [
      { re: /(?:(?<![\w$@%&>:])|(?<=::))(?:rmtree|remove_tree|unlink|rmdir|rename|move|mv)\b/g, all: true },
      { re: /(?:(?<![\w$@%&>:])|(?<=::))(?:copy|cp)\b/g, pick: [1] },
      { re: /(?<![\w$@%&>:])open\b/g, perlOpen: true },
      { re: /(?<![\w$@%&>:])truncate\b/g },
    ],
    references: /\\&\s*(?:\w+::)*(?:rmtree|remove_tree|unlink|rmdir)\b/g,
    evals: /(?<![\w$@%&>:])(?:eval|evalbytes)\b(?!\s*\{)/g,
    lookups: /->\s*can\s*\(|&\s*\{|&\s*\$/g,
  },
  ruby: {
    syntax: 'ruby',
    bare: true,
    deleters: (code) => [
      {
        re: /\b(?:FileUtils|FU)\s*\.\s*(?:rm_rf|rm_r|rm_f|rm|remove_dir|remove_entry(?:_secure)?|rmtree|remove|rmdir|mv|move|safe_unlink)\b/g,
        all: true,
      },
      { re: /\b(?:FileUtils|FU)\s*\.\s*(?:cp|copy|cp_r|install|ln_sf)\b/g, pick: [1] },
      { re: /\b(?:File|Dir)\s*\.\s*(?:delete|unlink|rmdir|rename)\b/g, all: true },
      { re: /\bFile\s*\.\s*(?:write|binwrite|truncate)\b/g },
      { re: /\bFile\s*\.\s*open\b/g, mode: { index: 1, writes: WRITES } },
      { re: /\.\s*(?:rmtree|rmdir)\b(?!\s*\()/g, receiver: true },
      ...(/\binclude\s+FileUtils\b/.test(code)
        ? [{ re: /(?<![\w.:])(?:rm_rf|rm_r|rm_f|rmtree|remove_dir|remove_entry)\b/g, all: true }]
        : []),
    ],
    evals: /\b(?:eval|instance_eval|class_eval|module_eval)\b(?!\s*(?:\{|do\b))/g,
    lookups: /\b(?:send|public_send|__send__|method|const_get)\b/g,
  },
  php: {
    syntax: 'php',
    bare: false,
    deleters: () => [
      { re: /(?<![\w$>:])(?:unlink|rmdir|file_put_contents)\s*(?=\()/g },
      { re: /(?<![\w$>:])rename\s*(?=\()/g, pick: [0, 1] },
      { re: /(?<![\w$>:])copy\s*(?=\()/g, pick: [1] },
      { re: /(?<![\w$>:])fopen\s*(?=\()/g, mode: { index: 1, writes: WRITES } },
    ],
    evals: /(?<![\w$>:])(?:eval|assert|create_function)\s*(?=\()/g,
    lookups: /\$\w+\s*(?=\()|\bcall_user_func(?:_array)?\s*(?=\()/g,
  },
  lua: {
    syntax: 'lua',
    bare: true,
    deleters: () => [
      { re: /\bos\s*\.\s*remove\b/g },
      { re: /\bos\s*\.\s*rename\b/g, pick: [0, 1] },
      { re: /\bio\s*\.\s*open\b/g, mode: { index: 1, writes: WRITES } },
    ],
    evals: /\b(?:loadstring|load|dofile)\s*(?=\()/g,
    lookups: /\b_G\s*\[/g,
  },
}
