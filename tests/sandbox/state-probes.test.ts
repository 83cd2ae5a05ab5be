import { execFileSync, spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { stateRoots } from '../../src/config/state-roots.js'
import { Sandbox } from '../../src/sandbox/sandbox.js'
import type { ExecRequest } from '../../src/sandbox/types.js'
import { hasBwrap, runInBwrap, unguardedSandbox } from '../helpers/sandbox.js'

/**
 * Probes of SECURITY.md's sandbox promises, tried as an attacker would: a
 * command inside cannot read or change myc's state (config, skills, roles,
 * memory, sessions, audit), nor leave anything the host runs later. The guard
 * is switched off here (it allows everything): the sandbox alone must hold.
 */

function project(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-probe-proj-')))
  writeFileSync(
    path.join(dir, 'mycelium.config.json'),
    JSON.stringify({
      mcpServers: {},
      skills: { dirs: ['skills', 'more-skills'] },
      audit: { file: '.mycelium/audit.jsonl' },
    }),
  )
  mkdirSync(path.join(dir, 'skills', 'common', 'scripts'), { recursive: true })
  writeFileSync(
    path.join(dir, 'skills', 'common', 'SKILL.md'),
    '---\nname: common\ndescription: c\nallowedRoles: [dev]\nallowedTools: []\n---\nsecret instructions\n',
  )
  writeFileSync(
    path.join(dir, 'skills', 'common', 'scripts', 'hello.sh'),
    'echo "script ran: $1"; ls "$(dirname "$0")" | wc -l; cat "$(dirname "$0")/../SKILL.md" 2>&1 | head -1\n',
  )
  writeFileSync(path.join(dir, 'skills', 'common', 'scripts', 'sibling.sh'), 'echo sibling\n')
  mkdirSync(path.join(dir, 'skills', 'vault-admin'), { recursive: true })
  writeFileSync(path.join(dir, 'skills', 'vault-admin', 'SKILL.md'), '---\nname: vault-admin\n---\n')
  mkdirSync(path.join(dir, '.mycelium', 'memory'), { recursive: true })
  mkdirSync(path.join(dir, '.mycelium', 'sessions'), { recursive: true })
  writeFileSync(
    path.join(dir, '.mycelium', 'memory', 'admin.memory.md'),
    '# Memory of role admin\n\nthe vault password is hunter2\n',
  )
  writeFileSync(path.join(dir, '.mycelium', 'sessions', 's1.jsonl'), '{"type":"meta"}\n')
  writeFileSync(path.join(dir, '.mycelium', 'audit.jsonl'), '{"event":"start"}\n')
  mkdirSync(path.join(dir, 'src'))
  writeFileSync(path.join(dir, 'src', 'main.txt'), 'code\n')
  execFileSync('git', ['init', '-q', dir])
  return dir
}

/** Every file under dir with its content (links as their targets), to compare before and after. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name)
      const st = lstatSync(p)
      const rel = path.relative(dir, p)
      if (st.isDirectory()) {
        out[`${rel}/`] = 'dir'
        walk(p)
      } else out[rel] = st.isSymbolicLink() ? `-> link` : readFileSync(p, 'utf8')
    }
  }
  walk(dir)
  return out
}

describe.runIf(hasBwrap)('the sandbox keeps myc’s state and the host out of reach (real bubblewrap)', () => {
  let dir: string
  let sandbox: Sandbox
  let request: (
    command: string | string[],
    extra?: Partial<ExecRequest>,
  ) => Promise<{ code: number | null; stdout: string; stderr: string; warnings?: string[] }>

  beforeEach(async () => {
    dir = project()
    const loaded = await loadConfig({ cwd: dir, env: {} })
    sandbox = unguardedSandbox()
    request = async (command, extra = {}) => {
      const o = await runInBwrap(sandbox, dir, command, { hiddenPaths: stateRoots(loaded, {}), ...extra })
      return { code: o.exitCode, stdout: o.stdout, stderr: o.stderr, ...(o.warnings ? { warnings: o.warnings } : {}) }
    }
  })

  const stateOf = (snap: Record<string, string>) =>
    Object.fromEntries(Object.entries(snap).filter(([k]) => !/^(src|out|build)/.test(k)))

  it('cannot add a skill (also in a skills folder that does not exist yet) or a role', async () => {
    const before = snapshot(dir)
    const r = await request(
      `mkdir -p skills/pwn; printf -- '---\\nname: pwn\\nallowedRoles: ["*"]\\nallowedTools: ["*"]\\n---\\n' > skills/pwn/SKILL.md; mkdir -p more-skills/pwn && echo x > more-skills/pwn/SKILL.md; mkdir -p roles && echo 'inherits: admin' > roles/dev.yaml; echo done`,
    )
    expect(r.stdout).toBe('done\n')
    expect(r.stderr).toMatch(/Read-only file system/)
    expect(snapshot(dir)).toEqual(before)
    expect(existsSync(path.join(dir, 'more-skills'))).toBe(false)
    expect(existsSync(path.join(dir, 'roles'))).toBe(false)
  })

  it('cannot list the skills, read or forge memory, sessions, audit or the config', async () => {
    const before = snapshot(dir)
    const r = await request(
      `ls -a skills .mycelium; cat .mycelium/memory/admin.memory.md mycelium.config.json; grep -r hunter2 . 2>/dev/null; echo '### [mem_forged]' >> .mycelium/memory/admin.memory.md; echo '{}' >> .mycelium/sessions/s1.jsonl; echo '{}' >> .mycelium/audit.jsonl; echo '{"skills":{}}' > mycelium.config.json; echo end`,
    )
    expect(r.stdout).not.toMatch(/hunter2|vault-admin|common|admin\.memory|s1\.jsonl|audit|mcpServers/)
    expect(r.stdout).toMatch(/end\n$/)
    expect(snapshot(dir)).toEqual(before)
    // The same reads outside the sandbox do find them (the probe can fail).
    expect(execFileSync('grep', ['-r', 'hunter2', dir], { encoding: 'utf8' })).toContain('hunter2')
  })

  it('cannot reach the state through links, hard links or renames', async () => {
    const before = stateOf(snapshot(dir))
    await request(
      `ln -s .mycelium/memory m; cat m/* ; ln .mycelium/audit.jsonl a 2>&1; ln .git/config c 2>&1; mv skills skills-old 2>&1; mv .mycelium x 2>&1; mv mycelium.config.json y 2>&1; ls skills-old x 2>&1; echo '[core]' >> c`,
    )
    const after = snapshot(dir)
    expect(stateOf(after)['.mycelium/memory/admin.memory.md']).toBe(before['.mycelium/memory/admin.memory.md'])
    expect(after['.git/config']).toBe(before['.git/config'])
    expect(Object.keys(after).filter((k) => /^(skills-old|x|y|a)$/.test(k))).toEqual([])
    // `c` is a new file of its own, not a second name of .git/config.
    expect(lstatSync(path.join(dir, '.git', 'config')).nlink).toBe(1)
  })

  it('leaves nothing the host runs later: .git is read-only as a whole, .envrc cannot be created', async () => {
    const before = snapshot(dir)
    const r = await request(
      `mv .git .git-old 2>&1; cp -a .git .git-copy && rm -rf .git 2>&1; echo 'echo pwned' > .git/hooks/pre-commit; printf '[alias]\\n\\tst = !touch /tmp/pwned\\n' >> .git/config; echo 'echo pwned' > .envrc; ln -s /tmp/x .envrc 2>&1; mkdir .envrc 2>&1; echo end`,
    )
    expect(r.stdout).toMatch(/end\n$/)
    const after = snapshot(dir)
    for (const key of Object.keys(after).filter((k) => !k.startsWith('.git-copy')))
      expect(after[key], key).toBe(before[key])
    expect(existsSync(path.join(dir, '.envrc'))).toBe(false)
    expect(existsSync(path.join(dir, '.git', 'hooks', 'pre-commit'))).toBe(false)
    // The copy is a plain folder the host never runs: git finds .git, untouched, with no alias.
    expect(spawnSync('git', ['-C', dir, 'config', '--get', 'alias.st']).status).toBe(1)
  }, 20_000)

  it('still writes the workspace, and leaves no placeholder behind', async () => {
    const r = await request(
      'echo ok > out.txt && mkdir -p build/x && echo y > build/x/y && rm -rf build && cat out.txt && ls -a',
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^ok\n/)
    // Inside, the missing protected names were held by placeholders…
    expect(r.stdout).toMatch(/\n\.envrc\n/)
    // …and afterwards the host has exactly what the command wrote.
    expect(readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('ok\n')
    expect(readdirSync(dir).sort()).toEqual(['.git', '.mycelium', 'mycelium.config.json', 'out.txt', 'skills', 'src'])
  })

  it('run_script’s one script is readable; its siblings and other skills are not', async () => {
    const script = path.join(dir, 'skills', 'common', 'scripts', 'hello.sh')
    const r = await request(['bash', script, 'arg'], { exposeFile: script })
    expect(r.stdout).toMatch(/^script ran: arg\n1\n/)
    expect(r.stdout).not.toMatch(/secret instructions|---/)
    const other = await request(
      'ls skills skills/common skills/common/scripts 2>&1; cat skills/vault-admin/SKILL.md 2>&1',
      { exposeFile: script },
    )
    expect(other.stdout).not.toMatch(/vault-admin\n|sibling/)
  })

  it('restricted hides the state too', async () => {
    const r = await request(
      ['bash', '-c', 'cat .mycelium/memory/admin.memory.md; ls skills; cat mycelium.config.json'],
      { trust: 'restricted' },
    )
    expect(r.stdout).toBe('')
  })

  it('refuses a workspace that lies in myc’s state', async () => {
    const r = await sandbox.run({
      command: 'true',
      trust: 'sandboxed',
      executor: 'bubblewrap',
      workspace: path.join(dir, '.mycelium'),
      timeoutMs: 5000,
      outputLimitBytes: 1000,
      network: { allow: [] },
      hiddenPaths: stateRoots(await loadConfig({ cwd: dir, env: {} }), {}),
    })
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    expect(!r.ok && r.error.message).toMatch(/holds myc's own state; set sandbox.workspace/)
  })

  it('sandbox.protect adds read-only paths, and sandbox.hide hides secrets', async () => {
    writeFileSync(path.join(dir, 'Makefile'), 'all:\n')
    writeFileSync(path.join(dir, '.env'), 'TOKEN=s3cret\n')
    const loaded = await loadConfig({ cwd: dir, env: {} })
    const hidden = stateRoots(
      {
        ...loaded,
        config: { ...loaded.config, sandbox: { ...loaded.config.sandbox, hide: ['.env'] } },
      },
      {},
    )
    const r = await request('cat .env; echo evil > Makefile; mkdir .vscode && echo x > .vscode/tasks.json; echo end', {
      hiddenPaths: hidden,
      readOnlyPaths: ['Makefile', '.vscode/'],
    })
    expect(r.stdout).toBe('end\n')
    expect(readFileSync(path.join(dir, 'Makefile'), 'utf8')).toBe('all:\n')
    expect(existsSync(path.join(dir, '.vscode'))).toBe(false)
  })
})

describe('the environment of what myc runs', () => {
  it('holds none of myc’s own environment, at every trust level that runs here', async () => {
    process.env.MYC_TOKEN_PROBE = 'tok-secret-value'
    try {
      const sandbox = unguardedSandbox()
      const levels: Array<['unrestricted' | 'sandboxed', 'none' | 'bubblewrap']> = [
        ['unrestricted', 'none'],
        ...(hasBwrap ? [['sandboxed', 'bubblewrap'] as ['sandboxed', 'bubblewrap']] : []),
      ]
      for (const [trust, executor] of levels) {
        const r = await sandbox.run({
          command: ['env'],
          trust,
          executor,
          workspace: mkdtempSync(path.join(tmpdir(), 'myc-probe-env-')),
          timeoutMs: 5000,
          outputLimitBytes: 100_000,
          network: { allow: [] },
        })
        expect(r.ok && r.outcome.stdout, trust).not.toContain('tok-secret-value')
        expect(
          r.ok &&
            r.outcome.stdout
              .split('\n')
              .filter(Boolean)
              .map((l) => l.split('=')[0])
              .sort(),
          trust,
        ).toEqual(expect.arrayContaining(['PATH']))
      }
    } finally {
      delete process.env.MYC_TOKEN_PROBE
    }
  })
})
