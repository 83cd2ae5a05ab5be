import type { ArgDef } from 'citty'

/** Flags every command accepts (DESIGN.md section 3). */
export const commonArgs = {
  config: {
    type: 'string',
    description: 'Config file (default: ./mycelium.config.json, then .yaml/.yml)',
    valueHint: 'file',
  },
  verbose: { type: 'boolean', description: 'Verbose logs on stderr' },
} as const satisfies Record<string, ArgDef>

/** `--json`: one JSON document on stdout instead of text. */
export const jsonArgs = {
  json: { type: 'boolean', description: 'Print one JSON document on stdout' },
} as const satisfies Record<string, ArgDef>

/** Writes a command's result to stdout: the only place results go. */
export function printResult(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
}

/** Writes a `--json` result document to stdout. */
export function printJson(value: unknown): void {
  printResult(JSON.stringify(value, null, 2))
}

/** `--role R` and `--skills a,b`: who the session is (chosen by whoever launches myc). */
export const principalArgs = {
  role: { type: 'string', description: 'Role of the session (else MYCELIUM_ROLE, else roles.default)', valueHint: 'role' },
  skills: { type: 'string', description: 'Skills active from the start, comma-separated', valueHint: 'a,b' },
} as const satisfies Record<string, ArgDef>

/** Splits a comma-separated flag value; undefined stays undefined. */
export function splitList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean)
}
