import { isObject, RpcCode } from '../../protocol/facts.js'
/**
 * SEP-2243 custom headers (MCP 2026-07-28, Streamable HTTP): a tool marks an
 * input-schema property `"x-mcp-header": "<Name>"`, and a client calling it
 * over HTTP mirrors that argument into an `Mcp-Param-<Name>` header, so
 * whatever sits in front (a gateway, a load balancer) can route on it without
 * reading the body. Myc reads the body, so it checks the two agree: a header
 * missing while the argument is set, one that cannot be decoded, or one that
 * says something else than the body is refused (HTTP 400, `-32020`
 * HeaderMismatch), as an intermediary may have acted on the header.
 *
 * Pure: the tool's schema, the call's arguments and the request's headers in,
 * a verdict out. The route decides which tool (the caller's visible ones).
 */

/** One argument a tool asks to be mirrored: where it is in `arguments`, the header's name part, the property's declared type. */
export interface ParamHeader {
  path: readonly string[]
  name: string
  type: string | undefined
}

/** The verdict on one tools/call: fine, or the first header at fault, named with the argument and the fix. */
export type ParamHeaderCheck =
  | { ok: true }
  | {
      ok: false
      /** `missing`: the argument is set, its header is not; `invalid`: the header cannot be read (a bad `=?base64?…?=`, raw non-ASCII); `mismatch`: it says something else. */
      kind: 'missing' | 'invalid' | 'mismatch'
      /** `Mcp-Param-<Name>`, as the schema names it. */
      header: string
      /** The argument's path in `arguments` (`region`, `target.region`). */
      argument: string
      /** What the client has to send instead. */
      fix: string
    }

/** An RFC 9110 token: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** The property types an argument can be mirrored from (the spec says string, integer, boolean; the SDK's reference fixtures also annotate numbers). */
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean'])
/** Where a schema nests subschemas other than `properties`: an `x-mcp-header` there is not allowed, and makes the tool's declarations invalid. */
const ELSEWHERE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
]
/** Canonical Base64: its alphabet, padded to a multiple of four. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
/** What may travel as a plain header value: visible ASCII, space and tab. */
const PLAIN = /^[\t\x20-\x7E]*$/

/**
 * The arguments a tool's input schema asks to be mirrored, found through
 * chains of `properties` at any depth. Undefined when there is none, or when
 * the declarations are invalid (a name that is no token, a non-primitive
 * property, two names equal but for case, one under `items`, `anyOf`, `$defs`
 * and the like): a conforming client leaves such a tool out, and it is not
 * enforced.
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] | undefined {
  const found: ParamHeader[] = []
  const seen = new Set<string>()
  const visit = (node: unknown, path: string[], reachable: boolean): boolean => {
    if (!isObject(node)) return true
    if ('x-mcp-header' in node) {
      const name = node['x-mcp-header']
      const type = typeof node.type === 'string' ? node.type : undefined
      if (
        !reachable ||
        path.length === 0 ||
        typeof name !== 'string' ||
        !TOKEN.test(name) ||
        type === undefined ||
        !PRIMITIVE.has(type) ||
        seen.has(name.toLowerCase())
      )
        return false
      seen.add(name.toLowerCase())
      found.push({ path, name, type })
    }
    if (isObject(node.properties))
      for (const [key, child] of Object.entries(node.properties))
        if (!visit(child, [...path, key], reachable)) return false
    for (const keyword of ELSEWHERE) {
      const sub = node[keyword]
      const branches = Array.isArray(sub)
        ? sub
        : isObject(sub) &&
            (keyword === 'patternProperties' ||
              keyword === 'dependentSchemas' ||
              keyword === '$defs' ||
              keyword === 'definitions')
          ? Object.values(sub)
          : [sub]
      for (const branch of branches) if (!visit(branch, [...path, `<${keyword}>`], false)) return false
    }
    return true
  }
  return visit(inputSchema, [], true) && found.length > 0 ? found : undefined
}

/**
 * A header's value as the client meant it: `=?base64?<payload>?=` is the
 * UTF-8 text of its payload (undefined when the payload is not canonical
 * Base64 or not UTF-8); anything else is literal, and undefined when it holds
 * more than visible ASCII (such a value has to come Base64-encoded). The
 * surrounding whitespace is not part of the value.
 */
export function decodeParamHeader(raw: string): string | undefined {
  const value = raw.replace(/^[\t ]+|[\t ]+$/g, '')
  const wrapped = /^=\?base64\?(.*)\?=$/s.exec(value)
  if (!wrapped) return PLAIN.test(value) ? value : undefined
  if (!BASE64.test(wrapped[1]!)) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(wrapped[1]!, 'base64'))
  } catch {
    return undefined
  }
}

/** An argument as its header carries it (strings as they are, numbers in decimal, booleans lowercase); undefined for what cannot be mirrored. */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return String(value)
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value)
  return undefined
}

/** `=?base64?…?=` of a text, or the text itself when it can travel plain. */
function encodedForHeader(text: string): string {
  return PLAIN.test(text) && text === text.trim() ? text : `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`
}

/**
 * Checks a tools/call's `Mcp-Param-*` headers against its arguments. An
 * argument that is absent or null expects no header (one sent anyway is
 * ignored); one that is set needs its header, decoding to the same text, or
 * for a number-typed property to the same number (`42.0` is `42`).
 */
export function checkParamHeaders(declared: readonly ParamHeader[], args: unknown, headers: Headers): ParamHeaderCheck {
  for (const d of declared) {
    let value: unknown = args
    for (const key of d.path) value = isObject(value) ? value[key] : undefined
    const text = asHeaderText(value)
    if (text === undefined) continue
    const header = `Mcp-Param-${d.name}`
    const argument = d.path.join('.')
    const encoded = encodedForHeader(text)
    // A long value is not worth echoing: the client has it.
    const expected =
      encoded.length <= 120
        ? `${header}: ${encoded}`
        : `${header} with the value of argument ${argument}${encoded === text ? '' : ' as =?base64?…?='}`
    const raw = headers.get(header)
    if (raw === null) return { ok: false, kind: 'missing', header, argument, fix: `send ${expected}` }
    const sent = decodeParamHeader(raw)
    if (sent === undefined)
      return {
        ok: false,
        kind: 'invalid',
        header,
        argument,
        fix: `send ${expected} (a value beyond visible ASCII travels as =?base64?<UTF-8 in canonical Base64>?=)`,
      }
    const numeric =
      (d.type === 'integer' || d.type === 'number') && typeof value === 'number' && /^-?\d+(\.\d+)?$/.test(sent)
    if (numeric ? Number(sent) !== value : sent !== text)
      return { ok: false, kind: 'mismatch', header, argument, fix: `send ${expected}` }
  }
  return { ok: true }
}

/** The words of a failed check, for the error message. */
function describeParamHeaderCheck(check: Exclude<ParamHeaderCheck, { ok: true }>): string {
  const what = {
    missing: `the ${check.header} header is missing while argument ${check.argument} is set`,
    invalid: `the ${check.header} header cannot be decoded`,
    mismatch: `the ${check.header} header does not match argument ${check.argument}`,
  }[check.kind]
  return `${what} (tool input property "${check.argument}" is marked x-mcp-header): ${check.fix}`
}

/** The request a body is when it is one tools/call naming a tool: its id, the tool's name, its arguments. */
export function toolCallOf(body: unknown): { id: string | number; name: string; args: unknown } | undefined {
  if (
    !isObject(body) ||
    body.method !== 'tools/call' ||
    (typeof body.id !== 'string' && typeof body.id !== 'number') ||
    !isObject(body.params)
  )
    return undefined
  const { name, arguments: args } = body.params
  return typeof name === 'string' ? { id: body.id, name, args } : undefined
}

/**
 * The refusal of a failed check, as the SDK answers its own header checks:
 * HTTP 400, `-32020`, the disagreeing pair in `data.mismatch`.
 */
export function paramHeaderRefusal(check: Exclude<ParamHeaderCheck, { ok: true }>, id: string | number): Response {
  const message = `Bad Request: the request headers and body disagree: ${describeParamHeaderCheck(check)}`
  const error = {
    code: RpcCode.headerMismatch,
    message,
    data: { mismatch: { header: check.header, body: `arguments.${check.argument}` } },
  }
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error }), {
    status: 400,
    headers: { 'Content-Type': 'application/json' },
  })
}
