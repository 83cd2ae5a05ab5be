import { describe, expect, it } from 'vitest'
import {
  cmdInvocation,
  escapeCmdArgument,
  escapeCmdCommand,
  findWindowsCommand,
  pathExtensions,
  pathFolders,
  quoteArgv,
  windowsEnv,
} from '../../src/children/windows-command.js'

/**
 * What cmd.exe does to a command line, enough to check the escaping: `%NAME%`
 * of a defined variable expanded (phase 1), then carets and quotes (phase
 * 2: `^x` is x outside quotes; an unescaped `&|<>` outside quotes would end
 * or redirect the command, which is an error here).
 */
function cmdPercent(line: string, vars: Record<string, string>): string {
  return line.replace(/%([^%]+)%/g, (whole, name: string) => vars[name] ?? whole)
}
function cmdCarets(line: string): string {
  let out = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (ch === '"') quoted = !quoted
    if (!quoted && ch === '^') {
      out += line[++i] ?? ''
      continue
    }
    if (!quoted && '&|<>'.includes(ch)) throw new Error(`cmd.exe would act on an unescaped ${ch} in: ${line}`)
    out += ch
  }
  return out
}
/** The C runtime's argv parser (CommandLineToArgvW rules). */
function parseArgv(line: string): string[] {
  const args: string[] = []
  let cur = ''
  let inArg = false
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (ch === '\\') {
      let n = 0
      for (; line[i] === '\\'; i++) n++
      if (line[i] === '"') {
        cur += '\\'.repeat(Math.floor(n / 2))
        if (n % 2 === 1) cur += '"'
        else quoted = !quoted
      } else {
        cur += '\\'.repeat(n)
        i--
      }
      inArg = true
    } else if (ch === '"') {
      quoted = !quoted
      inArg = true
    } else if ((ch === ' ' || ch === '\t') && !quoted) {
      if (inArg) args.push(cur)
      cur = ''
      inArg = false
    } else {
      cur += ch
      inArg = true
    }
  }
  if (inArg) args.push(cur)
  return args
}

// (A variable whose name has a caret, `^` or `PATH^`, would be expanded from a `%` escaped once: Windows sets none.)
const VARS = { PATH: 'C:\\Windows', OS: 'Windows_NT', CD: 'C:\\here' }

/** The arguments a program gets when cmd.exe runs `file args…` from `cmdInvocation`, and (batch) a shim `node echo.js %*` hands them on. */
function arrive(file: string, args: string[]): string[] {
  const invocation = cmdInvocation(file, args, {})
  expect(invocation.args.slice(0, 3)).toEqual(['/d', '/s', '/c'])
  const quoted = invocation.args[3]!
  expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true)
  // /s: the outer quotes go, the rest is the command line; the command ends at the first space not escaped.
  const line = cmdPercent(quoted.slice(1, -1), VARS)
  const commandEnd = line.search(/(?<!\^) /)
  expect(cmdCarets(commandEnd === -1 ? line : line.slice(0, commandEnd))).toBe(`"${file}"`)
  let rest = commandEnd === -1 ? '' : cmdCarets(line.slice(commandEnd + 1))
  // A batch file's %* is the rest as it came; the shim's line is read again (carets, not percents: %* is not expanded twice).
  if (/\.(cmd|bat)$/i.test(file)) rest = cmdCarets(rest)
  return parseArgv(rest)
}

const AWKWARD = [
  '',
  'plain',
  'a b',
  '  two  spaces  ',
  'tab\there',
  '"',
  '""',
  'say "hi"',
  'a"&"b',
  '"(foo|bar>baz|foz)"',
  '%PATH%',
  '%OS%%CD%',
  '50%',
  '%',
  '%%',
  '^',
  '^^"^',
  'a&b',
  'a && b || c',
  'a|b',
  '<in >out 2>&1',
  '(x)',
  '!x! !PATH!',
  '[]{}',
  ';,=',
  '`*?',
  "it's",
  'C:\\Program Files\\x\\',
  'C:\\dir with space\\',
  'a\\b',
  'a\\\\"b',
  'x\\\\',
  '\\"',
  '\\\\\\',
  'André Cruz ✓',
]

describe('Windows command lookup', () => {
  it('reads env names in any case, PATHEXT in order (cmd.exe’s list when unset), Path folders without quotes or empties', () => {
    expect(windowsEnv({ Path: 'a', PATH: undefined }, 'PATH')).toBe('a')
    expect(windowsEnv({ path: 'b' }, 'Path')).toBe('b')
    expect(windowsEnv({}, 'PATH')).toBeUndefined()
    expect(pathExtensions('.CMD;.Exe;;.CMD; .JS ;bad')).toEqual(['.cmd', '.exe', '.js'])
    expect(pathExtensions(undefined)).toEqual(['.com', '.exe', '.bat', '.cmd'])
    expect(pathExtensions('  ')).toEqual(['.com', '.exe', '.bat', '.cmd'])
    expect(pathFolders('C:\\a;;"C:\\Program Files\\b"; C:\\c ;')).toEqual(['C:\\a', 'C:\\Program Files\\b', 'C:\\c'])
  })

  it('finds the first folder of Path that has the name with an extension of PATHEXT', () => {
    const files = new Set(['C:\\b\\srv.cmd', 'C:\\c\\srv.exe', 'C:\\a\\srv'])
    const lookup = { env: { PATH: 'C:\\a;C:\\b;C:\\c' }, isFile: (f: string) => files.has(f), cwd: 'C:\\cfg' }
    expect(findWindowsCommand('srv', lookup)).toBe('C:\\b\\srv.cmd')
    expect(findWindowsCommand('srv.exe', lookup)).toBe('C:\\c\\srv.exe')
    expect(findWindowsCommand('..\\b\\srv', lookup)).toBe('C:\\b\\srv.cmd')
    expect(findWindowsCommand('C:\\a\\srv', lookup)).toBeUndefined()
    expect(findWindowsCommand('none', lookup)).toBeUndefined()
  })
})

describe('escaping for cmd.exe (cross-spawn’s scheme)', () => {
  it('escapes a command with carets, spaces included, as cross-spawn does, in escaped quotes', () => {
    expect(escapeCmdCommand('C:\\Program Files\\x (86)\\a.cmd')).toBe('^"C:\\Program^ Files\\x^ ^(86^)\\a.cmd^"')
    expect(escapeCmdCommand('C:\\t\\%CD%.bat')).toBe('^"C:\\t\\^%CD^%.bat^"')
    expect(escapeCmdCommand('C:\\t\\()%!^&;, .bat')).toBe('^"C:\\t\\^(^)^%^!^^^&^;^,^ .bat^"')
  })

  it('quotes an argument for argv: quotes escaped, backslashes doubled only before a quote', () => {
    const table: Array<[string, string]> = [
      ['', '""'],
      ['a b', '"a b"'],
      ['say "hi"', '"say \\"hi\\""'],
      ['a\\b', '"a\\b"'],
      ['a\\\\"b', '"a\\\\\\\\\\"b"'],
      ['x\\\\', '"x\\\\\\\\"'],
      ['C:\\dir\\', '"C:\\dir\\\\"'],
    ]
    for (const [arg, quoted] of table) expect(quoteArgv(arg), JSON.stringify(arg)).toBe(quoted)
  })

  it('gives cross-spawn’s escapes, once and twice, where cross-spawn is right', () => {
    // Outputs of cross-spawn 7.0.6's escape.argument(arg) and (arg, true).
    const table: Array<[string, string, string]> = [
      ['a b', '^"a^ b^"', '^^^"a^^^ b^^^"'],
      ['"', '^"\\^"^"', '^^^"\\^^^"^^^"'],
      ['%PATH%', '^"^%PATH^%^"', '^^^"^^^%PATH^^^%^^^"'],
      ['', '^"^"', '^^^"^^^"'],
      [
        '"(foo|bar>baz|foz)"',
        '^"\\^"^(foo^|bar^>baz^|foz^)\\^"^"',
        '^^^"\\^^^"^^^(foo^^^|bar^^^>baz^^^|foz^^^)\\^^^"^^^"',
      ],
    ]
    for (const [arg, once, twice] of table) {
      expect(escapeCmdArgument(arg, false), JSON.stringify(arg)).toBe(once)
      expect(escapeCmdArgument(arg, true), JSON.stringify(arg)).toBe(twice)
    }
  })

  it('keeps every awkward argument intact through cmd.exe into a program, and through a .cmd shim that hands on %*', () => {
    for (const file of [
      'C:\\tools\\shim.cmd',
      'C:\\My Tools (x86)\\run.bat',
      'C:\\Program Files\\app\\script.js',
      'C:\\t\\%CD% & (1).cmd',
    ]) {
      expect(arrive(file, AWKWARD), file).toEqual(AWKWARD)
      for (const arg of AWKWARD) expect(arrive(file, [arg]), `${file} ${JSON.stringify(arg)}`).toEqual([arg])
    }
  })

  it('the simulation can fail: once-escaped arguments through a shim, or unescaped ones, do not arrive intact', () => {
    const once = (args: string[]) =>
      parseArgv(cmdCarets(cmdCarets(args.map((a) => escapeCmdArgument(a, false)).join(' '))))
    expect(() => once(['a"&"b'])).toThrow(/unescaped &/)
    expect(once(['a"^"b'])).not.toEqual(['a"^"b'])
    expect(() => cmdCarets('"a"&"b"')).toThrow(/unescaped &/)
    expect(cmdPercent(quoteArgv('%PATH%'), VARS)).toBe('"C:\\Windows"')
  })
})
