#!/usr/bin/env node
// The error check of `npm run lint`: code in src/ decides by an error's class
// or code (MycError's `code`, `mycCodeOf` of src/errors.ts, the SDK's
// `SdkErrorCode`), never by its text: no `.message`, `.name` or
// `String(error)` of an error (nor a variable made from one) compared with a
// string, tested by a regex, or searched with includes, startsWith, endsWith,
// match, search or indexOf. Showing an error's message is fine. And no empty
// `catch {}`: an empty catch block says in a comment what it handles. Where
// a library gives its errors no code (JSON.parse), `// error-text: why` on
// the line above lets its words be read.
// An error is told by its name (`error`, `err`, `cause`, `failure`…, one
// ending in Error, or the name a catch gives it) or by `as Error`: a
// heuristic, so name errors so.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { src, tsFiles } from './lint-src.mjs'

/** An error by its name (a catch's own names are added per file) or by `as Error`. */
const errorNames = (caught) =>
  String.raw`(?:\b(?:${['error', 'err', 'cause', 'failure', 'failed', 'thrown', ...caught].join('|')}|\w*Error|\w*Err)\b|\(\s*\w+(?:\.\w+)*\s+as\s+\w*Error\s*\))`
/** An error's text: its message, name or stack, or String(error). */
const errorText = (err) => String.raw`(?:${err}\??\.(?:message|name|stack)\b|\bString\(\s*${err}\s*\))`
const SEARCH_NAMES = '(?:includes|startsWith|endsWith|match|matchAll|search|indexOf)'
const SEARCH = String.raw`\??\.${SEARCH_NAMES}\(`
const STRING = String.raw`(?:'[^'\n]*'|"[^"\n]*"|\x60[^\x60\n]*\x60)`

/** A file's code with comments blanked out (lengths kept, so offsets still give line numbers), and its text as is. */
function code(file) {
  const text = readFileSync(file, 'utf8')
  const blank = (m) => m.replace(/[^\n]/g, ' ')
  // Strings first, so that `//` inside one is not taken for a comment; then the comments.
  return { text, code: text.replace(/\/\*[\s\S]*?\*\/|(?<![:'"\x60\\])\/\/[^\n]*/g, blank) }
}

/** The names a file gives caught errors: `catch (e)`, `.catch((e) =>`, `.catch(e =>`. */
function caughtNames(source) {
  const names = new Set()
  for (const m of source.matchAll(/\bcatch\s*\(\s*\(?\s*(\w+)/g)) names.add(m[1])
  names.delete('async')
  return [...names]
}

/** The names of variables made from an error's text (`const message = error instanceof Error ? error.message : …`). */
function textVariables(source, text) {
  const names = new Set()
  const declared = /\b(?:const|let|var)\s+(\w+)\s*=\s*([^\n;]*)/g
  for (let pass = 0; pass < 2; pass++)
    for (const m of source.matchAll(declared)) {
      const known = names.size ? String.raw`|\b(?:${[...names].join('|')})\b` : ''
      if (new RegExp(`${text}${known}`).test(m[2])) names.add(m[1])
    }
  return names
}

/** The argument text of the call whose `(` is at `open`, up to its closing parenthesis. */
function argument(source, open) {
  let depth = 0
  for (let i = open; i < source.length; i++) {
    if (source[i] === '(') depth++
    else if (source[i] === ')' && --depth === 0) return source.slice(open + 1, i)
  }
  return source.slice(open + 1)
}

/** Where a file decides by an error's text: [offset, what it does]. */
function decisions(source) {
  const err = errorText(errorNames(caughtNames(source)))
  const vars = textVariables(source, err)
  const text = vars.size
    ? String.raw`(?:${err}|(?<![.\w])(?:${[...vars].join('|')})\b(?!\??\.(?!${SEARCH_NAMES}\()))`
    : err
  const found = []
  // pattern.test(…error.message…): the argument, as far as its closing parenthesis.
  const inArgument = new RegExp(text)
  for (const m of source.matchAll(/\.test\(/g))
    if (inArgument.test(argument(source, m.index + 5))) found.push([m.index, 'tests it with a regex'])
  const patterns = [
    // Against fixed words (a string or a regex); words made of other words (`said.includes(cause)`) only shape a message.
    [new RegExp(String.raw`${text}\s*${SEARCH}\s*(?:${STRING}|\/)`, 'g'), 'searches it'],
    [new RegExp(String.raw`(?<!typeof\s+)${text}\s*[!=]==?\s*${STRING}`, 'g'), 'compares it with a string'],
    [new RegExp(String.raw`${STRING}\s*[!=]==?\s*${text}`, 'g'), 'compares it with a string'],
    [new RegExp(String.raw`\bswitch\s*\(\s*${text}\s*\)`, 'g'), 'switches on it'],
  ]
  for (const [re, what] of patterns) for (const m of source.matchAll(re)) found.push([m.index, what])
  return found.sort((a, b) => a[0] - b[0])
}

const lineOf = (text, offset) => text.slice(0, offset).split('\n').length

const problems = []
for (const file of tsFiles(src)) {
  const rel = `src/${path.relative(src, file).split(path.sep).join('/')}`
  const { text, code: source } = code(file)
  const lines = text.split('\n')
  for (const [offset, what] of decisions(source)) {
    const line = lineOf(text, offset)
    // A library that gives its error no code leaves its words: `// error-text: why` on the line above says so.
    if (/\/\/ error-text: \S/.test(lines[line - 2] ?? '')) continue
    problems.push(
      `${rel}:${line} reads an error's message or name and ${what}: decide by its class or code (MycError's code, mycCodeOf in src/errors.ts)`,
    )
  }
  // A comment inside the braces is the word that makes an empty catch fine; `code` has the comments blanked, `text` not.
  for (const m of text.matchAll(/\bcatch\s*(?:\(\s*\w*\s*(?::\s*\w+\s*)?\))?\s*\{\s*\}/g))
    problems.push(
      `${rel}:${lineOf(text, m.index)} has an empty catch: say in a comment inside it what it handles, or handle the error`,
    )
}
for (const p of problems) console.error(`check-errors: ${p}`)
if (problems.length) process.exit(1)
console.log('check-errors: no error in src/ is told by its text, and no empty catch is without a word')
