import { execFile, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectHttp, freePort } from '../helpers/http.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'

const run = promisify(execFile)

/**
 * Every client snippet of README.md and docs/ (a fenced block that runs
 * myc: the clone's `…/mycelium/build/myc.cjs`, or the package
 * `mycelium-agg`) is run against the local build, as docs/development.md
 * ("Client snippets") says: the clone's paths and the package name become
 * build/myc.cjs, the config's placeholder paths a config over the echo
 * fixture, `npx @modelcontextprotocol/inspector` the Inspector of the
 * devDependencies, a listen port a free one. A snippet no runner here knows
 * fails the test: a new snippet is taught to it, never left unchecked.
 */

interface Snippet {
  where: string
  lang: string
  body: string
}

/** What makes a block a client snippet: it runs the clone's build or the npm package. */
const RUNS_MYC = /mycelium-agg|mycelium(?:\\\\|[\\/])build(?:\\\\|[\\/])myc\.cjs/

function snippets(): Snippet[] {
  const files = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).map((f) => path.join('docs', f))]
  return files.flatMap((file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8')
    return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)]
      .filter((m) => RUNS_MYC.test(m[2]!))
      .map((m) => ({ where: `${file}:${text.slice(0, m.index).split('\n').length}`, lang: m[1]!, body: m[2]! }))
  })
}

const inspectorCli = path.join(repoRoot, 'node_modules/@modelcontextprotocol/inspector/cli/build/cli.js')
const CONFIG_PLACEHOLDERS = [
  '/absolute/path/mycelium.config.json',
  '/srv/myc/mycelium.config.json',
  'C:\\Users\\me\\mycelium\\mycelium.config.json',
]

/** One word of a snippet with the documented substitutions. */
function localWord(word: string, config: string): string {
  if (CONFIG_PLACEHOLDERS.includes(word)) return config
  if (/mycelium[\\/]build[\\/]myc\.cjs$/.test(word)) return bundle
  return word.replace(/^(MYC_CONFIG=)(.*)$/, (_m, key: string, value: string) => key + localWord(value, config))
}

/** A command line of a snippet, in words, with the documented substitutions (the package and the Inspector included). */
function localCommand(words: readonly string[], config: string): string[] {
  const out: string[] = []
  for (let i = 0; i < words.length; i++) {
    if (words[i] === 'npx' && words[i + 1] === '-y' && words[i + 2] === 'mycelium-agg') {
      out.push(process.execPath, bundle)
      i += 2
    } else if (words[i] === 'npx' && words[i + 1] === '@modelcontextprotocol/inspector') {
      out.push(process.execPath, inspectorCli)
      i += 1
    } else out.push(words[i] === 'node' ? process.execPath : localWord(words[i]!, config))
  }
  return out
}

/** A shell script of a snippet with the same substitutions, as text (for snippets that need a shell: pipes, redirections). */
function localScript(text: string, config: string): string {
  const quote = (s: string) => `'${s}'`
  return text
    .replace(/npx -y mycelium-agg\b/g, `${quote(process.execPath)} ${quote(bundle)}`)
    .replace(/"?(?:\$RUNNER_TEMP|\/absolute\/path\/to)\/mycelium\/build\/myc\.cjs"?/g, quote(bundle))
    .replace(/^(\s*)node\b/gm, `$1${quote(process.execPath)}`)
    .replaceAll('/absolute/path/mycelium.config.json', config)
}

/** A POSIX shell's words of a line (quotes, backslash-newline continuations; no expansion). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)
}

/** The lines of a shell block, continuations joined, comments and blank lines left out. */
function shellLines(body: string): string[] {
  return body
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

/** Starts `argv` as an MCP client config would and lists its tools with a real SDK client. */
async function toolsOverStdio(argv: readonly string[], env: Record<string, string> = {}): Promise<string[]> {
  const transport = new StdioClientTransport({
    command: argv[0]!,
    args: argv.slice(1),
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
    cwd: tmpdir(),
  })
  const client = new Client({ name: 'snippet', version: '1.0.0' })
  await client.connect(transport)
  try {
    return (await client.listTools()).tools.map((t) => t.name)
  } finally {
    await client.close()
  }
}

describe('every client snippet of the README and docs runs against the local build', () => {
  const all = snippets()
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-snippets-'))
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { echo: fixtureEntry('echo') },
      // The container listens on 0.0.0.0, which needs a token (open mode: no role).
      http: { tokens: [{ env: 'MYC_SNIPPET_TOKEN' }] },
    }),
  )
  const token = 'a-long-random-token-for-the-snippet-tests'
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    requireBundle()
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('are found: the README’s, team.md’s, agent.md’s and windows.md’s', () => {
    const where = all.map((s) => s.where.split(':')[0])
    for (const file of ['README.md', 'docs/team.md', 'docs/agent.md', 'docs/windows.md']) expect(where).toContain(file)
    expect(all.length).toBeGreaterThanOrEqual(8)
  })

  /** The runner of each kind of snippet; a snippet none takes fails. */
  const runners: Record<string, (s: Snippet) => Promise<void>> = {
    json: async (s) => {
      const servers = (JSON.parse(s.body) as { mcpServers: Record<string, { command: string; args: string[] }> })
        .mcpServers
      for (const entry of Object.values(servers)) {
        const argv = localCommand([entry.command, ...entry.args], config)
        expect(await toolsOverStdio(argv), s.where).toContain('echo__echo')
      }
    },
    sh: async (s) => {
      for (const line of shellLines(s.body).filter((l) => RUNS_MYC.test(l))) await runShellLine(s, line)
    },
    yaml: async (s) => {
      const steps = parseYaml(s.body) as Array<{ run?: string; env?: Record<string, string> }>
      // The steps that run myc (the build step before them only clones and builds: not run here).
      const runs = steps.filter((step) => step.run !== undefined && /myc\.cjs"? run |mycelium-agg run /.test(step.run))
      const checks = steps.filter(
        (step) => step.run !== undefined && /myc\.cjs"? pin |mycelium-agg pin /.test(step.run),
      )
      expect(runs.length + checks.length, `${s.where}: a step that runs myc`).toBeGreaterThan(0)
      for (const step of runs) await runCiStep(s, step.run!)
      for (const step of checks) await runPinStep(s, step.run!)
    },
    dockerfile: async (s) => runDockerfile(s),
  }

  /** One line of a shell snippet: `claude mcp add NAME -- CMD…`, the Inspector CLI, or myc itself. */
  async function runShellLine(s: Snippet, line: string): Promise<void> {
    const words = shellWords(line)
    if (words[0] === 'claude' && words[1] === 'mcp' && words[2] === 'add') {
      const argv = localCommand(words.slice(words.indexOf('--') + 1), config)
      expect(await toolsOverStdio(argv), `${s.where}: ${line}`).toContain('echo__echo')
      return
    }
    if (words[0] === 'npx' && words[1] === '@modelcontextprotocol/inspector') {
      const argv = localCommand(words, config)
      const { stdout } = await run(argv[0]!, argv.slice(1), { timeout: 60_000, cwd: tmpdir() })
      const tools = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)
      expect(tools, `${s.where}: ${line}`).toContain('echo__echo')
      return
    }
    if (words[0] === 'node' && words.at(-1) === '--version') {
      const argv = localCommand(words, config)
      const { stdout } = await run(argv[0]!, argv.slice(1), { timeout: 30_000 })
      expect(stdout.trim(), `${s.where}: ${line}`).toMatch(/^\d+\.\d+\.\d+/)
      return
    }
    throw new Error(
      `${s.where}: no runner for the client snippet line "${line}": teach tests/e2e/client-snippets.slow.test.ts`,
    )
  }

  /** A CI step that runs the agent: in a project of its own (role developer), against the fake Messages API. */
  async function runCiStep(s: Snippet, script: string): Promise<void> {
    const project = mkdtempSync(path.join(tmpdir(), 'myc-snippet-ci-'))
    mkdirSync(path.join(project, 'skills', 'review'), { recursive: true })
    writeFileSync(
      path.join(project, 'skills', 'review', 'SKILL.md'),
      '---\nname: review\ndescription: reads\nallowedRoles: [developer]\nallowedTools: ["echo:echo"]\n---\n',
    )
    writeFileSync(
      path.join(project, 'mycelium.config.json'),
      JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') } }),
    )
    fake.setScript(() => ({ content: [{ type: 'text', text: 'No problems found.' }] }))
    // Asynchronously: the fake Messages API answers from this process.
    const r = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', localScript(script, config)], {
      cwd: project,
      timeout: 60_000,
      env: { ...process.env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url, RUNNER_TEMP: tmpdir() },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? '' }),
    )
    expect(r.code, `${s.where}: ${r.stderr}`).toBe(0)
    expect(readFileSync(path.join(project, 'run.jsonl'), 'utf8')).toContain('"type":"session_end"')
  }

  /** A CI step of `myc pin --check`: in a project whose lock was written by `myc pin --yes`, it passes. */
  async function runPinStep(s: Snippet, script: string): Promise<void> {
    const project = mkdtempSync(path.join(tmpdir(), 'myc-snippet-pin-'))
    writeFileSync(
      path.join(project, 'mycelium.config.json'),
      JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') } }),
    )
    const pinned = spawnSync(process.execPath, [bundle, 'pin', '--yes', '--config', 'mycelium.config.json'], {
      cwd: project,
      encoding: 'utf8',
    })
    expect(pinned.status, pinned.stderr).toBe(0)
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', localScript(script, config)], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, RUNNER_TEMP: tmpdir() },
    })
    expect(r.status, `${s.where}: ${r.stderr}`).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, locked: true })
  }

  /**
   * The container: the package as a file (`npm pack`; the build is fresh, so
   * without its prepack), the RUN's `npm install -g` of it into a prefix of
   * the test's, then the CMD with that `myc`, the test's config and a free
   * port; a real SDK client lists the tools over HTTP with the token.
   */
  async function runDockerfile(s: Snippet): Promise<void> {
    const work = mkdtempSync(path.join(tmpdir(), 'myc-snippet-docker-'))
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
    expect(pack.status, pack.stderr).toBe(0)
    const tarball = path.join(work, pack.stdout.trim().split('\n').at(-1)!)
    const lines = s.body.split('\n')
    const install = lines
      .filter((l) => l.startsWith('RUN '))
      .flatMap((l) => l.slice(4).split('&&'))
      .map((c) => c.trim())
      .find((c) => c.startsWith('npm install -g '))
    expect(install, `${s.where}: a RUN that installs the package`).toBeDefined()
    const args = shellWords(install!)
      .slice(3)
      .map((w) => (w.endsWith('mycelium-agg-*.tgz') ? tarball : w))
    const prefix = path.join(work, 'prefix')
    const installed = spawnSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', ...args],
      {
        encoding: 'utf8',
      },
    )
    expect(installed.status, installed.stderr).toBe(0)
    const cmd = JSON.parse(lines.find((l) => l.startsWith('CMD '))!.slice(4)) as string[]
    const port = await freePort()
    const argv = cmd.map((w, i) =>
      i === 0 && w === 'myc' ? path.join(prefix, 'bin', 'myc') : localWord(w.replace(/:8808$/, `:${port}`), config),
    )
    const proc = spawn(argv[0]!, argv.slice(1), {
      env: { ...process.env, MYC_SNIPPET_TOKEN: token },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    try {
      await waitFor(
        () => stderr.includes('serving MCP over Streamable HTTP') || proc.exitCode !== null,
        20_000,
        'serve',
      )
      expect(proc.exitCode, stderr).toBeNull()
      const { client } = await connectHttp(`http://127.0.0.1:${port}/mcp`, { token })
      expect(
        (await client.listTools()).tools.map((t) => t.name),
        s.where,
      ).toContain('echo__echo')
      await client.close()
    } finally {
      proc.kill()
    }
  }

  it.each(snippets().map((s) => [s.where, s] as const))(
    '%s',
    async (_where, s) => {
      const runner = runners[s.lang]
      if (!runner) throw new Error(`${s.where}: no runner for a \`${s.lang}\` client snippet: teach this test`)
      await runner(s)
    },
    90_000,
  )
})
