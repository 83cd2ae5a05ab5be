/**
 * Code mode's token figure (docs/tokens.md, "Code mode"): one multi-step
 * task done both ways through `build/myc.cjs serve` on the same config, the
 * reference filesystem server over a folder of 20 notes: find the notes
 * that mention a word. Direct: the model lists the folder and reads each
 * note with the filesystem tools. Code mode: it finds the two tools with
 * search_tools and sends one script to run_code. Each way counts the
 * tools/list plus every result the model reads (the `content` of each
 * tools/call answer, what a client hands the model), with myc's one token
 * counter (JSON characters / 4: src/principal/token-count.ts). The code the
 * model writes is output, reported beside but not counted in the ratio.
 *
 *   npm run bench -- --only code
 */
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { textTokens, toolTokens } from '../src/principal/token-count.js'

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const bundle = path.join(root, 'build', 'myc.cjs')
const fsServer = path.join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')

const WORD = 'mycelium'
const FILES = 20
/** Which notes mention the word (a fixed choice, so the figure is the same on every run). */
const MENTIONS = new Set([2, 5, 9, 13, 17, 18])

/** A note of a few paragraphs (about 2 KB, as meeting notes are), the word in it when `mention`. */
function note(i: number, mention: boolean): string {
  const topics = ['soil', 'roots', 'spores', 'hyphae', 'decay', 'forest', 'moisture', 'nitrogen']
  const lines = [`# Field note ${i + 1}`, '']
  for (let p = 0; p < 6; p++) {
    const topic = topics[(i + p) % topics.length]
    lines.push(
      `Paragraph ${p + 1} on ${topic}: samples were taken at the north plot and at the creek, sorted by depth, weighed, and logged with the time of day, the temperature and the light. The ${topic} readings rose after the rain and fell again within two days.`,
      '',
    )
  }
  if (mention) lines.push(`The ${WORD} under the oak connects the two plots.`)
  return lines.join('\n')
}

/** The folder of notes, and the names of those that mention the word. */
function notes(): { dir: string; expected: string[] } {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-bench-notes-')))
  const expected: string[] = []
  for (let i = 0; i < FILES; i++) {
    const name = `note-${String(i + 1).padStart(2, '0')}.md`
    writeFileSync(path.join(dir, name), note(i, MENTIONS.has(i)))
    if (MENTIONS.has(i)) expected.push(name)
  }
  return { dir, expected }
}

async function serve(config: Record<string, unknown>): Promise<Client> {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-code-'))
  const file = path.join(dir, 'mycelium.config.json')
  writeFileSync(file, JSON.stringify(config))
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bundle, 'serve', '--config', file],
      stderr: 'ignore',
    }),
  )
  return client
}

/** Tokens of what the model reads of a tools/call answer: its content. */
const resultTokens = (result: { content?: unknown }) => textTokens(JSON.stringify(result.content ?? []))
const text = (result: { content?: unknown }) => (result.content as Array<{ text: string }>)[0]!.text

/** The task with the filesystem tools, one call at a time, as a model without code mode does it. */
async function direct(dir: string): Promise<{ list: number; results: number; found: string[] }> {
  const client = await serve({ mcpServers: { fs: { command: process.execPath, args: [fsServer, dir] } } })
  const list = toolTokens((await client.listTools()).tools)
  const listing = await client.callTool({ name: 'fs__list_directory', arguments: { path: dir } })
  let results = resultTokens(listing)
  const found: string[] = []
  for (const line of text(listing).split('\n')) {
    if (!line.startsWith('[FILE] ')) continue
    const name = line.slice('[FILE] '.length)
    const read = await client.callTool({ name: 'fs__read_text_file', arguments: { path: path.join(dir, name) } })
    results += resultTokens(read)
    if (text(read).includes(WORD)) found.push(name)
  }
  await client.close()
  return { list, results, found }
}

/** The script a model sends to run_code for the task. */
function script(dir: string): string {
  return `const dir = ${JSON.stringify(dir)}
const { content } = await tools.fs.list_directory({ path: dir })
const names = content.split('\\n').filter((l) => l.startsWith('[FILE] ')).map((l) => l.slice(7))
const found = []
for (const name of names) {
  const note = await tools.fs.read_text_file({ path: dir + '/' + name })
  if (note.content.includes(${JSON.stringify(WORD)})) found.push(name)
}
return found`
}

/** The same task in code mode: search_tools for the tools, then one run_code. */
async function codeMode(
  dir: string,
): Promise<{ list: number; search: number; run: number; code: number; found: string[] }> {
  const client = await serve({
    mcpServers: { fs: { command: process.execPath, args: [fsServer, dir] } },
    session: { codeMode: true },
  })
  const listed = (await client.listTools()).tools
  if (!listed.some((t) => t.name === 'mycelium__run_code'))
    throw new Error('bench code: myc offers no run_code here (see `myc doctor`)')
  const search = await client.callTool({
    name: 'mycelium__search_tools',
    arguments: { query: 'list directory read text file', limit: 3 },
  })
  const code = script(dir)
  const run = await client.callTool({ name: 'mycelium__run_code', arguments: { code } })
  if (run.isError) throw new Error(`bench code: the run failed: ${text(run)}`)
  await client.close()
  return {
    list: toolTokens(listed),
    search: resultTokens(search),
    run: resultTokens(run),
    code: textTokens(code),
    found: JSON.parse(text(run)) as string[],
  }
}

/** Both ways on the same folder and config; throws when either finds other notes than the expected ones. */
export async function codeTokensBench(): Promise<Record<string, unknown>> {
  const { dir, expected } = notes()
  const plain = await direct(dir)
  const coded = await codeMode(dir)
  for (const [way, found] of [
    ['direct', plain.found],
    ['code mode', coded.found],
  ] as const)
    if (JSON.stringify(found) !== JSON.stringify(expected))
      throw new Error(`bench code: ${way} found ${found.join(', ')}, not ${expected.join(', ')}`)
  const directTotal = plain.list + plain.results
  const codeTotal = coded.list + coded.search + coded.run
  return {
    files: FILES,
    direct: { toolsList: plain.list, results: plain.results, total: directTotal },
    codeMode: { toolsList: coded.list, searchTools: coded.search, runCode: coded.run, total: codeTotal },
    codeWritten: coded.code,
    ratio: codeTotal / directTotal,
  }
}
