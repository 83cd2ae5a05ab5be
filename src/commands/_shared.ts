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
