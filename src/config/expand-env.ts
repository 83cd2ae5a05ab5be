/** A `${secret:NAME}` in a config, with where it was. */
export interface SecretRefAt {
  name: string
  path: (string | number)[]
}

/** A variable that a string names but the environment lacks, with where it was. */
export interface MissingVariable {
  name: string
  path: string
}

const PATTERN = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g

/**
 * Expands `${VAR}`, `$VAR` and `${VAR:-default}` in one string; `$$` is a
 * literal `$`. A variable that is unset (or empty, for `:-`) without a
 * default is reported through `missing` and left as written.
 */
function expandString(
  text: string,
  env: Record<string, string | undefined>,
  onMissing: (name: string) => void,
): string {
  return text.replace(
    PATTERN,
    (match, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
      if (match === '$$') return '$'
      const name = (braced ?? bare)!
      const value = env[name]
      if (fallback !== undefined)
        return value === undefined || value === '' ? expandString(fallback, env, onMissing) : value
      if (value === undefined) {
        onMissing(name)
        return match
      }
      return value
    },
  )
}

/**
 * `${secret:NAME}`: a value kept sealed on this machine (the secret store of
 * `myc add`, oauth/secret-store.ts), not in the config nor in the
 * environment; a child gets it when it starts (children/secret-refs.ts).
 * Expansion leaves it as written.
 */
const SECRET_REF = /\$\{secret:([^}]*)\}/g
/** A secret's name: a letter or digit, then letters, digits, `.`, `_` and `-`. */
export const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** How a config refers to secret `name`. */
export function secretRef(name: string): string {
  return `\${secret:${name}}`
}

/** The secret names a string refers to, in order (a malformed name included, for the check to name it). */
export function secretRefsIn(text: string): string[] {
  return [...text.matchAll(SECRET_REF)].map((m) => m[1]!)
}

/** `text` with each `${secret:NAME}` replaced by `value(NAME)`. */
export function replaceSecretRefs(text: string, value: (name: string) => string): string {
  return text.replace(SECRET_REF, (_match, name: string) => value(name))
}

/** Where a `${secret:NAME}` may stand: a server's `env` and `headers` values and its `args`. */
export function isSecretRefPath(path: readonly (string | number)[]): boolean {
  return (
    path.length === 4 &&
    path[0] === 'mcpServers' &&
    (path[2] === 'env' || path[2] === 'headers' || (path[2] === 'args' && typeof path[3] === 'number'))
  )
}

/** Where secrets live: the values of `env` and `headers` of any server, and its `oauth.clientSecret`. */
export function isSecretPath(path: readonly (string | number)[]): boolean {
  return (
    path.length === 4 &&
    path[0] === 'mcpServers' &&
    (path[2] === 'env' || path[2] === 'headers' || (path[2] === 'oauth' && path[3] === 'clientSecret'))
  )
}

/**
 * Expands every string in a parsed config tree (keys are left alone).
 * Returns the new tree, the variables that were missing (with their key
 * paths) and the expanded secret values (for redaction).
 */
export function expandTree(
  tree: unknown,
  env: Record<string, string | undefined>,
): { value: unknown; missing: MissingVariable[]; secrets: string[]; secretRefs: SecretRefAt[] } {
  const missing: MissingVariable[] = []
  const secrets: string[] = []
  const secretRefs: SecretRefAt[] = []
  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      for (const name of secretRefsIn(node)) secretRefs.push({ name, path })
      const value = expandString(node, env, (name) => missing.push({ name, path: formatPath(path) }))
      if (isSecretPath(path)) secrets.push(value)
      return value
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]))
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(node)) out[key] = walk(value, [...path, key])
      return out
    }
    return node
  }
  return { value: walk(tree, []), missing, secrets, secretRefs }
}

/** `mcpServers.fs.args[2]`: a key path as people write it. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(part)) out += out === '' ? part : `.${part}`
    else out += `[${JSON.stringify(part)}]`
  }
  return out === '' ? '(top level)' : out
}
