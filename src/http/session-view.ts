import type { CallToolResult } from '@modelcontextprotocol/server'
import type { PrincipalView } from '../principal/view.js'

/** What activating a skill a narrower credential took away answers. */
function notGrantedAnymore(skill: string): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text: `Skill ${skill} is no longer granted by this session's credential; initialize a new session with a credential that grants it.`,
      },
    ],
    isError: true,
  }
}

/** What a built-in call answers when the change it made could not be written to the shared store (Redis did not answer). */
function notSaved(): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text: 'This change could not be saved to the session store (http.sessionStore did not answer), so it may not hold on the next request; try again.',
      },
    ],
    isError: true,
  }
}

/**
 * A session's view: activating a skill in `revoked` (one a narrower
 * credential took away) is refused; with `pending`, built-in calls answer
 * only after it (the store's write they caused) settles, and answer an
 * error when that write failed.
 */
export function sessionView(
  view: PrincipalView,
  options: { revoked: ReadonlySet<string>; activateWire: string; pending?: () => Promise<void> | undefined },
): PrincipalView {
  const { revoked, activateWire, pending } = options
  const callBuiltin: PrincipalView['callBuiltin'] = (name, args, ctx) => {
    if (name === activateWire && typeof args.name === 'string' && revoked.has(args.name))
      return Promise.resolve(notGrantedAnymore(args.name))
    const answer = view.callBuiltin(name, args, ctx)
    return pending
      ? answer?.then(async (r) => {
          const unsaved = await pending()?.then(
            () => false,
            () => true,
          )
          return unsaved ? notSaved() : r
        })
      : answer
  }
  // Every other member is the view's own, bound once (lists ask toolVisible once per tool).
  const bound = new Map<PropertyKey, unknown>([['callBuiltin', callBuiltin]])
  if (view.activate) {
    const activate = view.activate.bind(view)
    bound.set('activate', ((name, actor, ctx) =>
      revoked.has(name) ? Promise.resolve(notGrantedAnymore(name)) : activate(name, actor, ctx)) satisfies NonNullable<
      PrincipalView['activate']
    >)
  }
  return new Proxy(view, {
    get(target, prop) {
      if (bound.has(prop)) return bound.get(prop)
      const value = Reflect.get(target, prop, target) as unknown
      if (typeof value !== 'function') return value
      const fn = (value as (...a: unknown[]) => unknown).bind(target)
      bound.set(prop, fn)
      return fn
    },
  })
}
