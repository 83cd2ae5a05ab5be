import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Sandbox } from '../../src/sandbox/sandbox.js'
import { hasBwrap, runInBwrap, unguardedDeps, unguardedSandbox } from '../helpers/sandbox.js'

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

describe.runIf(hasBwrap)('repositories and .envrc at any depth (real bubblewrap)', () => {
  const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' })
  const run = (ws: string, command: string) => runInBwrap(sandbox, ws, command)
  const quarantined = (warnings: readonly string[] | undefined, what: string) => {
    const line = (warnings ?? []).find((w) => w.startsWith(what))
    expect(line, `${what} in ${JSON.stringify(warnings)}`).toMatch(/myc moved it to .*myc-quarantine-/)
    return line!.replace(/^.* myc moved it to /, '')
  }

  it('a .git made in a subfolder (core.fsmonitor) is moved away before the host’s git can run it', async () => {
    const ws = folder('myc-later-git-')
    const r = await run(
      ws,
      "mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch ../MARK' && echo made",
    )
    expect(r.stdout).toBe('made\n')
    const away = quarantined(r.warnings, path.join(ws, 'sub', '.git'))
    expect(readFileSync(path.join(away, 'config'), 'utf8')).toContain('fsmonitor')
    expect(readdirSync(path.join(ws, 'sub'))).toEqual([])
    git(path.join(ws, 'sub'), 'status')
    expect(existsSync(path.join(ws, 'MARK'))).toBe(false)
  })

  it('a .git file, a bare layout with a work tree, and an .envrc deep down: each moved away', async () => {
    const ws = folder('myc-later-git-')
    const r = await run(
      ws,
      [
        'mkdir -p a/b deep/er bare && git init -q --bare payload',
        "git -C payload config core.fsmonitor 'touch MARK'",
        'echo "gitdir: $PWD/payload" > a/b/.git',
        'git init -q --bare bare && git -C bare config core.bare false',
        `git -C bare config core.worktree "$PWD/bare" && git -C bare config core.fsmonitor 'touch MARK'`,
        "echo 'touch MARK' > deep/er/.envrc",
      ].join(' && '),
    )
    expect(r.exitCode, r.stderr).toBe(0)
    quarantined(r.warnings, path.join(ws, 'a', 'b', '.git'))
    quarantined(r.warnings, path.join(ws, 'deep', 'er', '.envrc'))
    for (const repo of ['payload', 'bare']) {
      quarantined(r.warnings, `${path.join(ws, repo)} became a git repository`)
      expect(existsSync(path.join(ws, repo, 'HEAD'))).toBe(false)
      expect(existsSync(path.join(ws, repo, 'config')), 'the rest stays').toBe(true)
    }
    for (const dir of ['a/b', 'bare']) git(path.join(ws, dir), 'status')
    expect(existsSync(path.join(ws, 'MARK'))).toBe(false)
    expect(r.warnings).toHaveLength(4)
  })

  it('an existing nested repository: readable, git status and log work, its config and hooks stay as they are', async () => {
    const ws = folder('myc-later-nested-')
    const lib = path.join(ws, 'lib')
    mkdirSync(lib)
    git(lib, 'init', '-q')
    writeFileSync(path.join(lib, 'README'), 'lib\n')
    writeFileSync(path.join(lib, '.envrc'), 'export A=1\n')
    git(lib, 'add', 'README')
    git(lib, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first')
    const config = readFileSync(path.join(lib, '.git', 'config'), 'utf8')
    const r = await run(
      ws,
      [
        'cd lib && git status --short && git log --oneline | wc -l && cat README',
        "echo '[core] fsmonitor = touch MARK' >> .git/config",
        "echo 'touch MARK' > .git/hooks/post-checkout",
        'echo evil >> .envrc',
        'mv .git .git-old',
        'echo changed > README && echo end',
      ].join('; '),
    )
    // Benign twin: the nested project reads, and git works in it.
    expect(r.stdout).toBe('?? .envrc\n1\nlib\nend\n')
    expect(readFileSync(path.join(lib, 'README'), 'utf8')).toBe('changed\n')
    expect(readFileSync(path.join(lib, '.git', 'config'), 'utf8')).toBe(config)
    expect(existsSync(path.join(lib, '.git', 'hooks', 'post-checkout'))).toBe(false)
    expect(readFileSync(path.join(lib, '.envrc'), 'utf8')).toBe('export A=1\n')
    expect(r.warnings).toBeUndefined()
    // A copy of it is a repository of its own: moved away like a new one.
    const copy = await run(ws, 'cp -a lib/.git lib/copy && ls lib/copy/HEAD')
    quarantined(copy.warnings, `${path.join(lib, 'copy')} became a git repository`)
  })
})

describe.runIf(hasBwrap)('a workspace that is itself a bare repository', () => {
  it('keeps its config and hooks as they are, and the rest writable', async () => {
    const ws = folder('myc-later-bare-')
    spawnSync('git', ['init', '-q', '--bare', ws])
    const config = readFileSync(path.join(ws, 'config'), 'utf8')
    const r = await runInBwrap(
      sandbox,
      ws,
      "echo '[core] fsmonitor = touch MARK' >> config; echo 'touch MARK' > hooks/post-update; echo note > description; cat description",
    )
    expect(r.stdout).toBe('note\n')
    expect(readFileSync(path.join(ws, 'config'), 'utf8')).toBe(config)
    expect(existsSync(path.join(ws, 'hooks', 'post-update'))).toBe(false)
    expect(r.warnings).toBeUndefined()
  })
})

describe.runIf(hasBwrap && process.getuid?.() === 0)('as root', () => {
  it('a repository in a folder the sandbox cannot enter (another user’s, 0700) is left alone: runs still work', async () => {
    const ws = folder('myc-later-root-')
    const theirs = path.join(ws, 'theirs')
    mkdirSync(path.join(theirs, 'repo'), { recursive: true })
    spawnSync('git', ['init', '-q', path.join(theirs, 'repo')])
    spawnSync('chown', ['-R', '65534:65534', theirs])
    chmodSync(theirs, 0o700)
    const r = await runInBwrap(sandbox, ws, 'ls theirs 2>&1; echo ok')
    expect(r.stdout).toMatch(/Permission denied\nok\n$/)
    expect(r.warnings).toBeUndefined()
    expect(existsSync(path.join(theirs, 'repo', '.git'))).toBe(true)
  })
})

describe.runIf(hasBwrap)('a workspace too large to search', () => {
  it('is refused before the run, naming the fix; restricted (read-only) is not searched at all', async () => {
    const ws = folder('myc-later-large-')
    for (let i = 0; i < 12; i++) mkdirSync(path.join(ws, `d${i}`))
    const small = new Sandbox({ ...unguardedDeps, maxWorkspaceFolders: 10 })
    const r = await small.run({
      command: 'touch ran',
      trust: 'sandboxed',
      executor: 'bubblewrap',
      workspace: ws,
      timeoutMs: 10_000,
      outputLimitBytes: 1000,
      network: { allow: [] },
    })
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    expect(!r.ok && r.error.message).toMatch(/holds more than 10 folders.*set sandbox\.workspace to the project folder/)
    expect(existsSync(path.join(ws, 'ran'))).toBe(false)
    expect((await runInBwrap(small, ws, ['ls', 'd0'], { trust: 'restricted' })).exitCode).toBe(0)
  })
})
