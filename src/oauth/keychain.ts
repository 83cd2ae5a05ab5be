import { spawn } from 'node:child_process'

/** Where the token store's key is kept in the OS keychain. */
export interface KeyVault {
  /** How `myc auth status` names it. */
  readonly name: string
  /** The key written there, or undefined when there is none yet. */
  read(): Promise<string | undefined>
  write(value: string): Promise<void>
}

const SERVICE = 'mycelium'
const ACCOUNT = 'oauth-token-key'
/** A keychain that does not answer in this long (locked, waiting for a prompt nobody sees) is not there. */
const KEYCHAIN_TIMEOUT_MS = 5_000

/**
 * The OS keychain the key can live in here, or undefined: libsecret's
 * `secret-tool` (GNOME Keyring, KeePassXC, KWallet's Secret Service) on a
 * Linux session bus, or the macOS Keychain through `security`.
 * `MYC_TOKEN_KEYCHAIN=off` keeps the key in its file. Windows keeps the
 * file for now.
 */
export function osKeyVault(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): KeyVault | undefined {
  if ((env.MYC_TOKEN_KEYCHAIN ?? '').toLowerCase() === 'off') return undefined
  if (platform === 'darwin') return macKeychain(env)
  if (platform !== 'linux' || !env.DBUS_SESSION_BUS_ADDRESS) return undefined
  const attributes = ['service', SERVICE, 'account', ACCOUNT]
  return {
    name: `the OS keychain (Secret Service: service ${SERVICE}, account ${ACCOUNT})`,
    async read() {
      const r = await run('secret-tool', ['lookup', ...attributes], undefined, env)
      // secret-tool exits 1 for "no such item" and for a keychain it cannot reach: both read as none (the file is the fallback).
      return r.code === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined
    },
    async write(value) {
      const r = await run('secret-tool', ['store', '--label', 'Mycelium: key of the OAuth token store', ...attributes], value, env)
      if (r.code !== 0) throw new Error(`secret-tool store failed${r.stderr.trim() ? `: ${r.stderr.trim()}` : ''}`)
    },
  }
}

/**
 * The macOS login keychain through `security`: read with
 * `find-generic-password -w`; written through `security -i`, whose commands
 * come on stdin, so the key is never in a process's arguments.
 */
function macKeychain(env: Record<string, string | undefined>): KeyVault {
  return {
    name: `the macOS Keychain (generic password: service ${SERVICE}, account ${ACCOUNT})`,
    async read() {
      const r = await run('security', ['find-generic-password', '-s', SERVICE, '-a', ACCOUNT, '-w'], undefined, env)
      // 44: no such item; any other failure (no keychain, a locked one) reads as none too: the file is the fallback.
      return r.code === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined
    },
    async write(value) {
      if (!/^[A-Za-z0-9+/=]+$/.test(value)) throw new Error('the key to keep is not base64')
      const r = await run('security', ['-i'], `add-generic-password -U -s ${SERVICE} -a ${ACCOUNT} -w ${value}\n`, env)
      if (r.code !== 0) throw new Error(`security add-generic-password failed${r.stderr.trim() ? `: ${r.stderr.trim()}` : ''}`)
    },
  }
}

/** Runs a keychain tool: the secret on stdin (never in the arguments), bounded in time; a tool that is not installed is code null. */
function run(command: string, args: string[], input: string | undefined, env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(command, args, { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] })
    } catch {
      return resolve({ code: null, stdout, stderr })
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), KEYCHAIN_TIMEOUT_MS)
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', () => {
      clearTimeout(timer)
      resolve({ code: null, stdout, stderr })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin!.on('error', () => {})
    child.stdin!.end(input ?? '')
  })
}
