import type { Policy } from '../policy/policy.js'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import * as v from 'valibot'
import type { LoadedConfig } from '../config/load.js'
import { RoleDefinitionSchema } from '../config/schema.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { initialSkills } from '../policy/escalation.js'
import type { CodeModeSetting } from '../policy/explain.js'
import { chooseRole, type RoleDefinitionInput } from '../policy/roles.js'
import type { Catalogue } from '../registry/catalogue.js'
import { lazyOpenView } from './lazy-view.js'
import { openView, type PrincipalView } from './view.js'
import { loadSkills } from '../skills/load-skills.js'
import { buildSkillIndex } from '../skills/skill-index.js'
import { fileAuditSink, type AuditSink } from '../audit.js'
import { PolicyState, type PolicySources } from './policy-state.js'
import type { BuiltinRunner } from './builtin-exec.js'
import { PolicyView } from './policy-view.js'
import { isRoleName, ROLE_NAME_RULE } from '../config/role-name.js'
import { projectState } from '../config/state-roots.js'
import { MemoryStore } from '../memory/memory-store.js'
import type { CodeRuns } from '../code/code-runner.js'
import { codeModeView, type CodeModeViewOptions } from './code-view.js'

/** Open mode (no skills: everything served) or policy mode (docs/policy.md). */
export type PolicyMode =
  { kind: 'open' } | { kind: 'policy'; state: PolicyState; audit: AuditSink; memory: MemoryStore }

/** Whether the config puts myc in policy mode: a `skills` key, or a `skills/` folder beside the config. */
export function isPolicyMode(loaded: LoadedConfig): boolean {
  return loaded.config.skills !== undefined || existsSync(projectState(loaded).skillsDirs[0]!.path)
}

/**
 * Loads skills and role definitions (config `roles.definitions` and
 * `roles/<id>.yaml` beside the config) and builds the policy state. Problems
 * with single skills are logged and those skills skipped; a broken role
 * graph (unknown parent, cycle) is a config error.
 */
export async function loadPolicyMode(
  loaded: LoadedConfig,
  catalogue: Pick<Catalogue, 'toolNamesOf'>,
  logger: Logger,
  audit: AuditSink = openAuditSink(loaded, logger),
  /** The sources, loaded already (serve checks its flags against them before its children start). */
  sources?: PolicySources,
): Promise<PolicyMode> {
  if (!isPolicyMode(loaded)) return { kind: 'open' }
  if (loaded.config.session.lazyTools)
    logger.warn(
      `${loaded.file ?? 'config'}: session.lazyTools applies to open mode only (a config without skills); here sessions list what their skills allow, and search_tools is one of the meta tools`,
    )
  let state: PolicyState
  try {
    state = new PolicyState(sources ?? (await loadSources(loaded, logger)), catalogue)
  } catch (error) {
    if (error instanceof MycError) throw error
    throw new MycError('config_invalid', `${loaded.file ?? 'config'}: ${(error as Error).message}`)
  }
  return { kind: 'policy', state, audit, memory: openMemoryStore(loaded, audit) }
}

/** The audit log of a config (`audit.file` beside it), or a sink that writes nowhere. */
export function openAuditSink(loaded: LoadedConfig, logger: Logger): AuditSink {
  return fileAuditSink(projectState(loaded).auditFile?.path, (error) => logger.warn(`audit log: ${String(error)}`))
}

/** The role memory of a config: `memory.dir` beside the config file, with its caps. Touches no file until used. */
export function openMemoryStore(loaded: LoadedConfig, audit?: AuditSink): MemoryStore {
  const { memory } = loaded.config
  return new MemoryStore({
    dir: projectState(loaded).memoryDir.path,
    maxEntryBytes: memory.maxEntryBytes,
    maxRoleBytes: memory.maxRoleBytes,
    ...(audit ? { audit } : {}),
  })
}

/** Reads skills, role files and the served skill index (what policy mode is built from). */
export async function loadSources(loaded: LoadedConfig, logger: Logger): Promise<PolicySources> {
  const { config } = loaded
  const state = projectState(loaded)
  const { skills, problems } = await loadSkills(
    state.skillsDirs.map((d) => d.path),
    {
      baseDir: loaded.dir,
      separator: config.namespace.separator,
    },
  )
  for (const p of problems) logger.warn(`skill ${p.file}${p.path ? ` (${p.path})` : ''}: ${p.message}; skipped`)
  const definitions = new Map<string, RoleDefinitionInput>(Object.entries(config.roles.definitions))
  for (const [name, def] of await loadRoleFiles(state.rolesDir.path)) {
    if (definitions.has(name))
      throw new MycError(
        'config_invalid',
        `role "${name}" is defined both in ${loaded.file ?? 'the config'} (roles.definitions) and in roles/${name}.yaml; keep one`,
      )
    definitions.set(name, def)
  }
  const { served, unserved } = await buildSkillIndex(skills, {
    maxFileBytes: config.skills?.maxFileBytes ?? 1_048_576,
    maxSkillBytes: config.skills?.maxSkillBytes ?? 8_388_608,
  })
  for (const u of unserved) logger.warn(`skill ${u.name} is not served over MCP: ${u.reason}`)
  return { skills, problems, definitions, config, skillIndex: served, unserved }
}

/** The folders whose changes reload the skills: every skills dir, and roles/ beside the config. */
export function watchedFolders(loaded: LoadedConfig): string[] {
  const state = projectState(loaded)
  return [...state.skillsDirs.map((d) => d.path), state.rolesDir.path]
}

async function loadRoleFiles(dir: string): Promise<Map<string, RoleDefinitionInput>> {
  const out = new Map<string, RoleDefinitionInput>()
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n)).sort()
  } catch {
    return out
  }
  for (const name of names) {
    const file = path.join(dir, name)
    const role = name.replace(/\.ya?ml$/, '')
    if (!isRoleName(role))
      throw new MycError('config_invalid', `${file}: "${role}" is not a role name: ${ROLE_NAME_RULE}; rename the file`)
    const parsed = v.safeParse(RoleDefinitionSchema, parseYaml(await readFile(file, 'utf8')) ?? {})
    if (!parsed.success) {
      const issue = parsed.issues[0]
      throw new MycError(
        'config_invalid',
        `${file}: ${(issue.path ?? []).map((p) => String(p.key)).join('.') || '(top level)'}: ${issue.message} (keys: allowedSkills, deny, inherits, description, budget, codeMode)`,
      )
    }
    out.set(role, parsed.output)
  }
  return out
}

export interface ViewRequest {
  role?: string
  /** Where `role` came from, for errors (default `--role`; the adhoc agent's is `agent.adhocRole`). */
  roleFrom?: string
  skills?: readonly string[]
  env: Record<string, string | undefined>
  catalogue: Catalogue
  logger: Logger
  /** Runs the sandboxed built-ins; without it `mycelium:exec` and `run_script` do not exist. */
  runner?: BuiltinRunner
  /** Exactly these skills, no defaults and no meta tools: a principal that cannot escalate (an agent's worker). */
  only?: readonly string[]
  /** How the session reaches myc, for the audit log (default stdio). */
  transport?: 'stdio' | 'http'
  /** Runs code mode's code; without it no session is in code mode (code/code-mode.ts says why). */
  codeRunner?: CodeRuns
  /** Who the view is for: a session of `myc serve` (default; `session.codeMode`) or the agent (`agent.codeMode`). A role's `codeMode` wins over either. */
  face?: CodeModeFace
}

/** Who a view serves, for code mode's default: a session of `myc serve`, or the agent (run, workflow, adhoc, chat). */
export type CodeModeFace = 'session' | 'agent'

/** Why a role cannot be chosen in open mode, and how to get roles. */
function openModeMessage(asked: string, loaded: Pick<LoadedConfig, 'file' | 'dir'>): string {
  return `${asked}: ${loaded.file ?? 'this folder'} has no skills, so myc runs in open mode: every tool of every server, no roles to choose. To use roles, add skills: a "skills" key in the config or a skills/ folder beside it (\`myc init\` writes a starter set, \`myc skill add NAME\` one skill)`
}

/** Why `role` cannot use `skill`, naming the skills it can reach; undefined when it can. */
export function unreachableSkill(policy: Policy, role: string, skill: string): string | undefined {
  if (policy.reaches(role, skill)) return undefined
  return `role "${role}" cannot use skill "${skill}" (reachable: ${
    policy
      .reachable(role)
      .map((s) => s.name)
      .join(', ') || 'none'
  })`
}

/** What the checks of a principal read of a mode: its kind, and in policy mode the roles and the policy (a PolicyMode is one). */
export type ModeShape = { kind: 'open' } | { kind: 'policy'; state: Pick<PolicyState, 'roles' | 'policy'> }

/** What {@link checkViewRequest} reads of a view request. */
export type PrincipalRequest = Pick<ViewRequest, 'role' | 'roleFrom' | 'skills' | 'env'>

/**
 * What {@link createView} checks of a request, without making a view (no
 * session starts, nothing is audited): so that a command can refuse its
 * flags before any child starts. Resolves with the role chosen (undefined
 * in open mode); throws MycError('usage') for an unknown role, a skill the
 * role cannot reach, or a role or skills asked for in open mode.
 */
export function checkViewRequest(mode: ModeShape, loaded: LoadedConfig, request: PrincipalRequest): string | undefined {
  if (mode.kind === 'open') {
    // A role asked for by a person, where there are no roles: say so rather than serve everything.
    const asked =
      request.role !== undefined && (request.roleFrom ?? '--role') === '--role'
        ? `--role ${request.role}`
        : request.skills?.length
          ? `--skills ${request.skills.join(',')}`
          : undefined
    if (asked) throw new MycError('usage', openModeMessage(asked, loaded))
    return undefined
  }
  const choice = chooseRole(
    {
      flag: request.role,
      ...(request.roleFrom ? { flagFrom: request.roleFrom } : {}),
      env: request.env.MYCELIUM_ROLE,
      configDefault: loaded.config.roles.default,
    },
    mode.state.roles,
  )
  if (!choice.ok) throw new MycError('usage', choice.error)
  for (const skill of request.skills ?? []) {
    const unreachable = unreachableSkill(mode.state.policy, choice.role, skill)
    if (unreachable) throw new MycError('usage', `--skills: ${unreachable}`)
  }
  return choice.role
}

/** The view of one session: open mode, or the chosen role's principal. Throws MycError('usage') as {@link checkViewRequest} says. */
export function createView(mode: PolicyMode, loaded: LoadedConfig, request: ViewRequest): PrincipalView {
  const role = checkViewRequest(mode, loaded, request)
  if (mode.kind === 'open' || role === undefined) {
    if (request.codeRunner && codeModeDefault(loaded, request.face).on)
      return codeModeView(openView(), codeOptions(request.codeRunner, loaded, request))
    return loaded.config.session.lazyTools
      ? lazyOpenView(() => request.catalogue.tools(), loaded.config.namespace)
      : openView()
  }
  const { config } = loaded
  const policy = mode.state.policy
  const view = new PolicyView({
    state: mode.state,
    role,
    initialSkills: request.only
      ? initialSkills(policy, role, [], request.only)
      : initialSkills(policy, role, config.session.defaultSkills, request.skills ?? []),
    mode: config.session.escalation,
    protectedSkills: new Set(config.session.protectedSkills),
    metaTools: request.only ? false : config.session.metaTools,
    naming: config.namespace,
    audit: mode.audit,
    logger: request.logger,
    catalogueTools: () => request.catalogue.tools(),

    ...(request.runner ? { runner: request.runner } : {}),
    ...(request.transport ? { transport: request.transport } : {}),
    memory: mode.memory,
  })
  // A worker (`only`) calls its skill's tools directly: never code mode.
  const code =
    request.codeRunner && !request.only && codeModeOf(mode.state, role, codeModeDefault(loaded, request.face)).on
  return code ? codeModeView(view, codeOptions(request.codeRunner!, loaded, request)) : view
}

/** Whether code mode is on for the face (or for either, without one), and the key that says so: what a role that sets no `codeMode` gets. */
export function codeModeDefault(loaded: LoadedConfig, face: CodeModeFace = 'session'): CodeModeSetting {
  return face === 'agent'
    ? { on: loaded.config.agent.codeMode, by: 'agent.codeMode' }
    : { on: loaded.config.session.codeMode, by: 'session.codeMode' }
}

/** Whether any view of this config for `face` could be in code mode: its key (`session.codeMode`, `agent.codeMode`), or a role that sets `codeMode`. */
export function codeModeWanted(mode: PolicyMode, loaded: LoadedConfig, face: CodeModeFace = 'session'): boolean {
  if (codeModeDefault(loaded, face).on) return true
  return mode.kind === 'policy' && [...mode.state.sources.definitions.values()].some((d) => d.codeMode === true)
}

/** Whether a role's views are in code mode: the nearest of its chain (the role, then its parent…) that says, else `fallback` (the face's key). */
export function codeModeOf(state: PolicyState, role: string, fallback: CodeModeSetting): CodeModeSetting {
  const chain = state.roles.get(role)?.chain ?? [role]
  const by = chain.find((name) => state.sources.definitions.get(name)?.codeMode !== undefined)
  return by === undefined
    ? fallback
    : { on: state.sources.definitions.get(by)!.codeMode!, by: `the codeMode of role "${by}"` }
}

function codeOptions(runner: CodeRuns, loaded: LoadedConfig, request: ViewRequest): CodeModeViewOptions {
  return { runner, naming: loaded.config.namespace, catalogueTools: () => request.catalogue.tools() }
}
