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
 * Linux session bus, the macOS Keychain through `security`, or the
 * Windows Credential Manager through Windows PowerShell.
 * `MYC_TOKEN_KEYCHAIN=off` keeps the key in its file.
 */
export function osKeyVault(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): KeyVault | undefined {
  if ((env.MYC_TOKEN_KEYCHAIN ?? '').toLowerCase() === 'off') return undefined
  if (platform === 'darwin') return macKeychain(env)
  if (platform === 'win32') return windowsCredentials(env)
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
      const r = await run(
        'secret-tool',
        ['store', '--label', 'Mycelium: key of the OAuth token store', ...attributes],
        value,
        env,
      )
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
      if (r.code !== 0)
        throw new Error(`security add-generic-password failed${r.stderr.trim() ? `: ${r.stderr.trim()}` : ''}`)
    },
  }
}

/** Windows PowerShell's way to the Credential Manager's password vault (WinRT). */
const VAULT = `$ErrorActionPreference = 'Stop'
[void][Windows.Security.Credentials.PasswordVault,Windows.Security.Credentials,ContentType=WindowsRuntime]
$vault = New-Object Windows.Security.Credentials.PasswordVault`

/**
 * The Windows Credential Manager (its password vault) through Windows
 * PowerShell: the script goes as -EncodedCommand, the key on stdin, so the
 * key is in no process's arguments.
 */
function windowsCredentials(env: Record<string, string | undefined>): KeyVault {
  const powershell = (script: string, input?: string) =>
    run(
      'powershell.exe',
      [
        '-NoProfile',
        '-NonInteractive',
        '-EncodedCommand',
        Buffer.from(`${VAULT}\n${script}`, 'utf16le').toString('base64'),
      ],
      input,
      env,
    )
  return {
    name: `the Windows Credential Manager (resource ${SERVICE}, user ${ACCOUNT})`,
    async read() {
      const r = await powershell(
        `try { $c = $vault.Retrieve('${SERVICE}', '${ACCOUNT}'); $c.RetrievePassword(); [Console]::Out.Write($c.Password) } catch { exit 44 }`,
      )
      return r.code === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined
    },
    async write(value) {
      const r = await powershell(
        `$key = [Console]::In.ReadLine()\n$vault.Add((New-Object Windows.Security.Credentials.PasswordCredential('${SERVICE}', '${ACCOUNT}', $key)))`,
        `${value}\n`,
      )
      if (r.code !== 0)
        throw new Error(
          `the Windows Credential Manager refused the key${r.stderr.trim() ? `: ${r.stderr.trim()}` : ''}`,
        )
    },
  }
}

/** Runs a keychain tool: the secret on stdin (never in the arguments), bounded in time; a tool that is not installed is code null. */
function run(
  command: string,
  args: string[],
  input: string | undefined,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
