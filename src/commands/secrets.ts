import { defineCommand } from 'citty'
import { commandIO, type CommandIO } from '../command-io.js'
import { SECRET_NAME } from '../config/expand-env.js'
import { ExitCode, MycError, usageError } from '../errors.js'
import type { SecretStore } from '../oauth/secret-store.js'
import { peopleEntries } from './_people-store.js'
import { commonArgs, jsonArgs, principalFlag, printJson, printResult, restPositional } from './_shared.js'

/**
 * `myc secrets set|list|rm`: the secrets of the sealed store (oauth/secret-store.ts),
 * the local person's by default, another person's with `--principal`: what
 * `${secret:NAME}` (the local person's) and `{ "secret": "NAME" }` (the
 * person a scoped server's instance runs for) read (docs/team.md).
 */

const nameArg = {
  name: {
    type: 'positional',
    required: true,
    description:
      'The secret\'s name, as a config refers to it ({ "secret": "NAME" } or ${secret:NAME}; `myc secrets list` shows them)',
    valueHint: 'name',
  },
} as const
const principalArg = {
  principal: {
    type: 'string',
    description:
      "Whose secret: an http.tokens entry's name, or jwt:SUBJECT (the person a scoped server's instance runs for); default: yours",
    valueHint: 'name',
  },
} as const

function checkedName(name: string): string {
  if (!SECRET_NAME.test(name))
    throw usageError(
      `"${name}" is not a secret's name: letters, digits, ".", "_" and "-", starting with a letter or digit`,
    )
  return name
}

/** A person's store, and what to close once done with it (a Redis connection). */
interface OpenStore {
  store: SecretStore
  close(): Promise<void>
}

/**
 * The store `--principal` names: the local person's is this machine's file;
 * another person's is where `myc serve --http` with this config reads it
 * (the file, or that config's Redis: _people-store.ts).
 */
async function storeOf(
  io: CommandIO,
  principal: string | undefined,
  configPath: string | undefined,
): Promise<OpenStore> {
  const { SecretStore } = await import('../oauth/secret-store.js')
  const who = principalFlag(principal)
  const shared = who === undefined ? undefined : await peopleEntries(io, who, configPath, 'secrets')
  if (!shared)
    return { store: SecretStore.forUser(io.env, who === undefined ? {} : { principal: who }), close: async () => {} }
  const store = SecretStore.forUser(
    { ...io.env, MYC_TOKEN_KEY: shared.key },
    { principal: who!, shared: shared.entries },
  )
  return { store, close: () => shared.close() }
}

/** Runs `use` on the store `--principal` names, closing it after. */
async function withStore<T>(
  io: CommandIO,
  principal: string | undefined,
  configPath: string | undefined,
  use: (store: SecretStore) => Promise<T>,
): Promise<T> {
  const open = await storeOf(io, principal, configPath)
  try {
    return await use(open.store)
  } finally {
    await open.close()
  }
}

/** All of stdin as text. */
async function readStdin(io: CommandIO): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of io.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The value to keep: typed at a prompt (nothing echoed) on a terminal, else all of stdin with one trailing newline dropped. */
async function readValue(io: CommandIO, name: string, principal: string | undefined): Promise<string> {
  if (io.stdin.isTTY === true) {
    if (io.stderr.isTTY !== true)
      throw usageError('myc secrets set reads the value from stdin, or asks for it on a terminal: pipe it in')
    const { askSecretOnTerminal } = await import('../install/ask.js')
    return askSecretOnTerminal(`value of secret "${name}"${principal ? ` for ${principal}` : ''} (not shown): `)
  }
  const { secretValue } = await import('../oauth/secret-store.js')
  const value = secretValue(await readStdin(io))
  if (value === '') throw usageError('the value on stdin is empty: pipe the secret in, e.g. printf %s "$TOKEN" | …')
  return value
}

const set = defineCommand({
  meta: {
    name: 'set',
    description: 'Keep a secret, sealed: the value from stdin, or typed at a prompt (never from the command line)',
  },
  args: {
    ...commonArgs,
    ...nameArg,
    ...principalArg,
    value: restPositional({
      type: 'positional',
      required: false,
      description: 'Refused: a value on the command line stays in the shell history and the process table',
      valueHint: 'none',
    }),
  },
  async run({ args, data }) {
    const io = commandIO(data)
    // A value given as an argument is refused without being repeated.
    if ((args._ as string[]).length > 1)
      throw usageError(
        'myc secrets set takes the value from stdin or a prompt, never from the command line (it would stay in the shell history and the process table): printf %s "$VALUE" | myc secrets set NAME',
      )
    const name = checkedName(args.name)
    principalFlag(args.principal)
    const value = await readValue(io, name, args.principal)
    const where = await withStore(io, args.principal, args.config, async (store) => {
      await store.set(name, value)
      return store.file
    })
    printResult(
      io,
      `kept secret "${name}"${args.principal === undefined ? '' : ` for ${args.principal}`}, sealed in ${where}`,
    )
    return ExitCode.ok
  },
})

const list = defineCommand({
  meta: { name: 'list', description: "A person's secret names (never their values)" },
  args: { ...commonArgs, ...jsonArgs, ...principalArg },
  async run({ args, data }) {
    const io = commandIO(data)
    const { principal, file, names } = await withStore(io, args.principal, args.config, async (store) => ({
      principal: store.principal,
      file: store.file,
      names: await store.names(),
    }))
    if (args.json) printJson(io, { ok: true, principal, store: file, names })
    else
      printResult(
        io,
        names.length > 0
          ? names.join('\n')
          : `no secrets${args.principal === undefined ? '' : ` for ${args.principal}`}`,
      )
    return ExitCode.ok
  },
})

const rm = defineCommand({
  meta: { name: 'rm', description: 'Forget a secret' },
  args: { ...commonArgs, ...nameArg, ...principalArg },
  async run({ args, data }) {
    const io = commandIO(data)
    const name = checkedName(args.name)
    const whose = args.principal === undefined ? '' : ` for ${args.principal}`
    if (!(await withStore(io, args.principal, args.config, (store) => store.remove(name))))
      throw new MycError('runtime', `no secret "${name}" is kept${whose}`, {
        fix: `myc secrets list${args.principal === undefined ? '' : ` --principal ${args.principal}`} shows the names`,
      })
    printResult(io, `forgot secret "${name}"${whose}`)
    return ExitCode.ok
  },
})

export default defineCommand({
  meta: { name: 'secrets', description: 'Sealed secrets, yours or a person’s (--principal): set, list, rm' },
  subCommands: { set, list, rm },
})
