import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { authorizationAddress, openBrowser, openerFor } from '../../src/oauth/browser.js'
import { repoRoot } from '../helpers/fixtures.js'
import { waitFor } from '../helpers/wait-for.js'

/** A folder holding fake openers (`xdg-open`, `open`) that record each argv, one line per argument after its count. */
function fakeOpeners(): { env: NodeJS.ProcessEnv; calls: () => string[][] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-opener-'))
  const record = path.join(dir, 'calls.txt')
  for (const name of ['xdg-open', 'open']) {
    writeFileSync(path.join(dir, name), `#!/bin/sh\nprintf '%s\\n' "${name}" "$#" "$@" >> '${record}'\n`)
    chmodSync(path.join(dir, name), 0o755)
  }
  const calls = () => {
    if (!existsSync(record)) return []
    const lines = readFileSync(record, 'utf8').split('\n')
    const out: string[][] = []
    for (let i = 0; i + 1 < lines.length;) {
      const count = Number(lines[i + 1])
      out.push([lines[i]!, ...lines.slice(i + 2, i + 2 + count)])
      i += 2 + count
    }
    return out
  }
  return { env: { PATH: dir }, calls }
}

/** Every .ts file under src/, relative to the repo. */
function sourceFiles(dir = path.join(repoRoot, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [path.relative(repoRoot, full)] : []
  })
}

// Shell and cmd.exe syntax that must reach the browser as text: a substitution, a chain, a variable, %VARS%.
const HOSTILE_HTTPS = new URL(
  'https://auth.example/authorize?next=$(touch%20pwned)&x=`id`;y=%USERPROFILE%&z=%PATH%|more',
)

describe('the browser opener (src/oauth/browser.ts)', () => {
  it('refuses any address but http(s), naming the server and the scheme, and starts no opener', async () => {
    const { env, calls } = fakeOpeners()
    for (const bad of [
      'file:///tmp/x/evil.desktop',
      'javascript:alert(1)',
      'data:text/html,hi',
      'smb://host/share',
      'vscode://ext/run',
    ]) {
      const scheme = new URL(bad).protocol
      await expect(openBrowser(new URL(bad), 'tracker', { env })).rejects.toThrow(
        `the authorization address of "tracker" is a ${scheme} address: myc opens and shows only http and https addresses`,
      )
      expect(() => authorizationAddress(new URL(bad), 'tracker')).toThrow(`"tracker" is a ${scheme} address`)
    }
    // A good address after them: the opener's only call is that one (none of the refused ones started it).
    const good = new URL('https://auth.example/authorize?client_id=a')
    expect(await openBrowser(good, 'tracker', { env })).toBe(true)
    await waitFor(() => calls().length > 0, 10_000, 'the fake xdg-open to record its call')
    expect(calls()).toEqual([['xdg-open', good.href]])
  })

  it('hands an https address to xdg-open (Linux) and open (macOS) as one argument that nothing expands', async () => {
    const { env, calls } = fakeOpeners()
    expect(await openBrowser(HOSTILE_HTTPS, 'tracker', { env })).toBe(true)
    expect(
      await openBrowser(new URL('http://127.0.0.1:9/authorize?a=1&b=2'), 'tracker', { env, platform: 'darwin' }),
    ).toBe(true)
    await waitFor(() => calls().length === 2, 10_000, 'both fake openers to record their calls')
    expect(calls()).toContainEqual(['xdg-open', HOSTILE_HTTPS.href])
    expect(calls()).toContainEqual(['open', 'http://127.0.0.1:9/authorize?a=1&b=2'])
    expect(HOSTILE_HTTPS.href).toContain('%USERPROFILE%')
    expect(HOSTILE_HTTPS.href).toContain('$(touch')
  })

  it('on Windows: the system’s rundll32.exe by its full path, the address one argument, never cmd /c start', () => {
    const { command, args } = openerFor(HOSTILE_HTTPS.href, 'win32', { SystemRoot: 'D:\\Win' })
    expect(command).toBe('D:\\Win\\System32\\rundll32.exe')
    expect(args).toEqual(['url.dll,FileProtocolHandler', HOSTILE_HTTPS.href])
    expect(openerFor('https://a.example/', 'win32', {}).command).toBe('C:\\Windows\\System32\\rundll32.exe')
    expect(openerFor('https://a.example/', 'linux', {})).toEqual({ command: 'xdg-open', args: ['https://a.example/'] })
  })

  it('is the only opener: no other file of src/ starts a process it has not been reviewed for, or names an opener', () => {
    // Every file that can start a process, and what it starts. A new one fails here until it is reviewed and listed.
    const spawners: Record<string, string> = {
      'src/oauth/browser.ts': 'the browser opener (this file)',
      'src/oauth/keychain.ts': 'secret-tool, security, powershell.exe (the token key, on stdin)',
      'src/sandbox/probe.ts': 'the sandbox tools, to probe them',
      'src/sandbox/spawn-limited.ts': 'commands inside the sandbox',
      'src/children/process-tree.ts': 'taskkill',
      'src/children/stdio-transport.ts': 'the stdio children of the config',
      'src/code/code-runner.ts': "code mode's runner: myc's own executable under bubblewrap",
      'src/install/runtimes.ts': "myc add: a package runtime's version (uvx, docker), to say what is missing",
    }
    const startsProcesses = /(from\s+|import\(\s*|require\(\s*)['"](node:)?child_process['"]/
    const found = sourceFiles().filter((file) => startsProcesses.test(readFileSync(path.join(repoRoot, file), 'utf8')))
    expect(found.sort()).toEqual(Object.keys(spawners).sort())
    // Programs that open an address, and the cmd.exe way of doing it: named by the opener alone.
    const openers =
      /\b(xdg-open|rundll32|url\.dll|FileProtocolHandler|explorer\.exe|sensible-browser|x-www-browser|www-browser|gnome-open|kde-open|wslview|gio open)\b|['"](open|start)['"]\s*,\s*\[|command:\s*['"](open|start)['"]|['"]\/c['"]\s*,\s*['"]start['"]/
    const naming = sourceFiles().filter((file) => openers.test(readFileSync(path.join(repoRoot, file), 'utf8')))
    expect(naming).toEqual(['src/oauth/browser.ts'])
    // Every place a browser is started goes through openBrowser.
    const callers = sourceFiles().filter((file) =>
      /\bopenBrowser\(/.test(readFileSync(path.join(repoRoot, file), 'utf8')),
    )
    expect(callers.sort()).toEqual(['src/commands/auth.ts', 'src/oauth/browser.ts', 'src/oauth/reauthorize.ts'])
  })
})
