import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import { BUILTIN_SERVER } from '../../policy/policy.js'
import { toWireName, type WireNameOptions } from '../../registry/wire-names.js'
import type { BuiltinCallContext, PrincipalView } from '../../principal/view.js'

/** How activate_skill reads to a 2026-era client over HTTP: it reports the credential's skills, it does not change them. */
const ACTIVATE_DESCRIPTION =
  "Returns a skill's instructions. Your credential grants your skills (OAuth scope skill:<name>); for another, HTTP 403 insufficient_scope names the scope to step up to."

/** The same over stdio, where the launch (its role and --skills) is the credential. */
const ACTIVATE_DESCRIPTION_STDIO =
  "Returns a skill's instructions. Your skills are the ones myc was launched with (--skills); this call adds none: a person does (/add in myc chat, or --skills)."

/** Where a 2026-era credential comes from: a request's token (HTTP), or the launch of myc itself (stdio). */
export interface CredentialViewOptions {
  /** `stdio`: the launch's role and --skills are the credential; activate_skill explains that a person adds skills. Default `http`. */
  credential?: 'http' | 'stdio'
}

/** The OAuth scope that grants a skill (as `http.tokens[].skills` and a JWT's skills claim name it). */
export function skillScope(skill: string): string {
  return `skill:${skill}`
}

/** A view whose principal is its credential alone: what it sees never changes by what it calls. */
export interface CredentialView extends PrincipalView {
  /**
   * The skill a tools/call would need granted first: `activate_skill` naming
   * a skill the role reaches that the credential does not grant. Undefined
   * for every other call (an unknown or unreachable skill included: that one
   * is refused as over the 2025 era, with the answer of a skill that does not exist).
   */
  skillToStepUp(toolName: unknown, args: unknown): string | undefined
  /** `activate_skill` as this principal lists it; undefined where it does not exist (open mode, `session.metaTools: false`). */
  activateTool(): Tool | undefined
}

/**
 * The view of a 2026-era principal (docs/protocol-eras.md): the view of its
 * credential's role and skills, with escalation taken out, so that tools/list
 * is a function of the credential alone and never of the requests made with
 * it. `activate_skill` stays, as the way to read a granted skill's
 * instructions and to learn which scope another one needs; its call for a
 * skill not granted never reaches the view (over HTTP the route answers 403
 * `insufficient_scope` before; without credentials it is refused here with
 * how to get it; over stdio, with the skill's instructions and how a person
 * adds it). `deactivate_skill` does not exist: a credential's skills
 * cannot be dropped by a request. The view itself is never asked to
 * activate or deactivate anything, so one view serves every request of its
 * credential, concurrently.
 */
export function credentialView(
  view: PrincipalView,
  naming: WireNameOptions,
  options: CredentialViewOptions = {},
): CredentialView {
  const overStdio = options.credential === 'stdio'
  const description = overStdio ? ACTIVATE_DESCRIPTION_STDIO : ACTIVATE_DESCRIPTION
  const activateWire = toWireName(BUILTIN_SERVER, 'activate_skill', naming)
  const deactivateWire = toWireName(BUILTIN_SERVER, 'deactivate_skill', naming)
  let cache: { from: readonly Tool[]; tools: readonly Tool[] } | undefined
  // The same definition for the same one of the view: a list rebuilt (a policy rebuilt on a catalogue change) is not a list changed (seen-lists.ts).
  const described = new WeakMap<Tool, Tool>()
  const describe = (t: Tool): Tool => {
    let d = described.get(t)
    if (!d) described.set(t, (d = { ...t, description }))
    return d
  }
  const builtinTools = (): readonly Tool[] => {
    const from = view.builtinTools()
    if (cache?.from !== from) {
      const tools = from
        .filter((t) => t.name !== deactivateWire)
        .map((t) => (t.name === activateWire ? describe(t) : t))
      cache = { from, tools }
    }
    return cache.tools
  }
  const skillToStepUp = (toolName: unknown, args: unknown): string | undefined => {
    if (toolName !== activateWire || !builtinTools().some((t) => t.name === activateWire)) return undefined
    const skill = typeof args === 'object' && args !== null ? (args as { name?: unknown }).name : undefined
    if (typeof skill !== 'string') return undefined
    const reachable = view.reachableSkills?.().find((s) => s.name === skill)
    return reachable && !reachable.active ? skill : undefined
  }
  const wrapped: CredentialView = {
    toolVisible: (entry) => view.toolVisible(entry),
    promptVisible: (entry) => view.promptVisible(entry),
    serverVisible: (server) => view.serverVisible(server),
    builtinTools,
    callBuiltin(wireName: string, args: Record<string, unknown>, ctx: () => BuiltinCallContext) {
      if (wireName === deactivateWire) return undefined
      const skill = skillToStepUp(wireName, args)
      if (skill !== undefined) return Promise.resolve(notGranted(view, skill, overStdio))
      // activate_skill here names a granted skill (answered with its instructions, nothing changes) or one the role cannot use (refused as unknown).
      return view.callBuiltin(wireName, args, ctx)
    },
    onChange: (listener) => view.onChange(listener),
    skillToStepUp,
    activateTool: () => builtinTools().find((t) => t.name === activateWire),
  }
  withOptionalMembers(view, wrapped, deactivateWire)
  return wrapped
}

/** A skill the credential does not grant: over HTTP, the scope that would; over stdio, its instructions and who can add it. */
function notGranted(view: PrincipalView, skill: string, overStdio: boolean): CallToolResult {
  if (overStdio) return notLaunchedWith(view, skill)
  return {
    content: [
      {
        type: 'text',
        text: `Skill ${skill} is not granted to this client. A 2026-07-28 client's skills are those of its credential alone (the scope ${skillScope(skill)} grants this one); without credentials, they are the ones myc was launched with. Ask for a token that grants ${skillScope(skill)}, or for myc to be relaunched with --skills ${skill}.`,
      },
    ],
    isError: true,
  }
}

/** Over stdio: the skill's instructions, with the error that this client cannot add it (a person does). */
function notLaunchedWith(view: PrincipalView, skill: string): CallToolResult {
  const instructions = view.reachableSkills?.().find((s) => s.name === skill)?.instructions ?? ''
  const explanation = `Skill ${skill} is not active, and this client cannot activate it: a 2026-07-28 client's skills over stdio are the ones mycelium was launched with (--skills), and no request changes them. A person adds skills: /add ${skill} in myc chat, or a relaunch of myc serve with --skills ${skill}. Until then its tools stay hidden.${instructions ? ' Its instructions follow.' : ''}`
  return {
    content: [
      { type: 'text', text: explanation },
      ...(instructions ? [{ type: 'text' as const, text: instructions }] : []),
    ],
    isError: true,
  }
}

/** The view's optional members, only those it has (open mode has none of them). */
function withOptionalMembers(view: PrincipalView, wrapped: CredentialView, deactivateWire: string): void {
  if (view.servedSkills) wrapped.servedSkills = () => view.servedSkills!()
  if (view.childSkillsVisible) wrapped.childSkillsVisible = (server) => view.childSkillsVisible!(server)
  if (view.revision) wrapped.revision = () => view.revision!()
  if (view.describe) wrapped.describe = () => view.describe!()
  if (view.reachableSkills) wrapped.reachableSkills = () => view.reachableSkills!()
  if (view.recordCall) wrapped.recordCall = (call) => view.recordCall!(call)
  if (view.listsChildTools !== undefined) wrapped.listsChildTools = view.listsChildTools
  if (view.unwrapCall) wrapped.unwrapCall = (wireName, args) => view.unwrapCall!(wireName, args)
  // The code's `tools.mycelium` has what this view answers: no deactivate_skill.
  const code = view.codeMode
  if (code) wrapped.codeMode = { ...code, builtins: () => code.builtins().filter((t) => t.name !== deactivateWire) }
}
