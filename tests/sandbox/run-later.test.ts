import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hasBwrap, runInBwrap, unguardedSandbox } from '../helpers/sandbox.js'

/**
 * Probes of SECURITY.md's promise that nothing a command writes in the
 * workspace runs on the host later: the home folder's start-up files
 * wherever the home folder lies. The guard is off: the sandbox alone must
 * hold.
 */
const sandbox = unguardedSandbox()
const folder = (prefix: string) => realpathSync(mkdtempSync(path.join(tmpdir(), prefix)))

describe.runIf(hasBwrap)('the home folder’s start-up files (real bubblewrap)', () => {
  const attack = [
    'echo evil >> "$HOME/.bashrc"',
    'echo evil > "$HOME/.profile"',
    'mkdir -p "$HOME/.ssh" && echo key >> "$HOME/.ssh/authorized_keys"',
    'mkdir -p "$HOME/.local/bin" && echo evil > "$HOME/.local/bin/ls"',
    'echo evil > "$HOME/.cargo/config.toml"',
    'mv "$HOME" "$HOME-moved"',
  ].join('; ')

  const home = (dir: string) => {
    mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(dir, '.bashrc'), '# mine\n')
    writeFileSync(path.join(dir, 'notes.txt'), 'notes\n')
    return dir
  }
  const untouched = (dir: string) => {
    expect(readFileSync(path.join(dir, '.bashrc'), 'utf8')).toBe('# mine\n')
    expect(readdirSync(dir).sort()).toEqual(['.bashrc', 'notes.txt', 'written.txt'])
    expect(existsSync(`${dir}-moved`)).toBe(false)
  }

  it('a home folder inside the workspace: start-up files stay as they were, the rest is workspace', async () => {
    const ws = folder('myc-later-ws-')
    const alice = home(path.join(ws, 'home', 'alice'))
    const r = await runInBwrap(sandbox, ws, `${attack}; cat "$HOME/notes.txt"; echo ok > "$HOME/written.txt"`, {
      home: alice,
    })
    // Benign twin: the home folder is part of the workspace, readable and writable outside its start-up files.
    expect(r.stdout).toBe('notes\n')
    untouched(alice)
    expect(readFileSync(path.join(alice, 'written.txt'), 'utf8')).toBe('ok\n')
  })

  it('the home folder is the workspace: the same', async () => {
    const alice = home(folder('myc-later-home-'))
    const r = await runInBwrap(sandbox, alice, `${attack}; cat notes.txt; echo ok > written.txt`, { home: alice })
    expect(r.stdout).toBe('notes\n')
    untouched(alice)
  })

  it('a home folder that holds the workspace: empty inside, nothing reaches the host', async () => {
    const alice = home(folder('myc-later-home-'))
    const ws = path.join(alice, 'proj')
    mkdirSync(ws)
    const r = await runInBwrap(sandbox, ws, `${attack}; ls -A "$HOME"; echo ok > "$HOME/../written.txt"; echo ok > w`, {
      home: alice,
    })
    expect(r.stdout).not.toContain('notes.txt')
    expect(readFileSync(path.join(alice, '.bashrc'), 'utf8')).toBe('# mine\n')
    expect(readdirSync(alice).sort()).toEqual(['.bashrc', 'notes.txt', 'proj'])
    expect(readFileSync(path.join(ws, 'w'), 'utf8')).toBe('ok\n')
  })
})
