import { randomBytes } from 'node:crypto'
import {
  createRequestStateCodec,
  ProtocolError,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { PrincipalView } from '../../principal/view.js'
import { isObject, RpcCode } from '../../protocol/facts.js'
import type { Runtime } from '../../runtime/runtime.js'
import { LINGER_MS, MAX_PARKED, MAX_WAIT_MS, ParkedCall, STATE_PREFIX, type CallTarget } from './parked-calls.js'

/**
 * The parked calls of one 2026 face (parked-calls.ts): each is kept once
 * it asks its client something, found again by the requestState of the
 * client's retry (myc's own: sealed with the SDK's codec, a key per
 * process, bound to the method and the credential), and forgotten a while
 * after it ends.
 */

/** The payload of myc's requestState: which parked call, and which round (so each round's state differs). */
interface StatePayload {
  call: string
  round: number
}

/** What ctx.mcpReq.requestState() gives for myc's own state (the children's stay strings). */
export interface ParkedState {
  parked: StatePayload
}

export function isParkedState(state: unknown): state is ParkedState {
  return isObject(state) && isObject(state.parked) && typeof state.parked.call === 'string'
}

/** Whose request this is: the credential's key over HTTP (the route puts it in authInfo), one launch over stdio. */
export function principalOf(ctx: ServerContext): string {
  return ctx.http?.authInfo?.clientId ?? ''
}

/**
 * The parked calls of one face (the HTTP route, one stdio connection): made
 * and found by requestState, forgotten LINGER_MS after they end.
 */
export class ParkedCalls {
  private readonly calls = new Map<string, ParkedCall>()
  private readonly rounds = new WeakMap<ParkedCall, number>()
  private readonly codec: RequestStateCodec<StatePayload>

  constructor(private readonly runtime: Runtime) {
    this.codec = createRequestStateCodec<StatePayload>({
      key: randomBytes(32),
      ttlSeconds: Math.ceil((MAX_WAIT_MS + LINGER_MS) / 1000),
      bind: (ctx) => `${ctx.mcpReq.method}\0${principalOf(ctx)}`,
    })
  }

  /**
   * The server's `requestState.verify`: myc's own state is checked (a
   * tampered, expired or foreign one throws, which the SDK answers -32602)
   * and becomes a ParkedState; any other stays the string it is
   * (undefined keeps the raw value: a modern child's own, for it to check).
   */
  readonly verify = async (state: string, ctx: ServerContext): Promise<unknown> => {
    if (!state.startsWith(STATE_PREFIX)) return undefined
    return { parked: await this.codec.verify(state.slice(STATE_PREFIX.length), ctx) } satisfies ParkedState
  }

  /** A new call for a request of `ctx`, not yet kept: kept once it asks (see mint). */
  open(view: PrincipalView, target: CallTarget, ctx: ServerContext): ParkedCall {
    return new ParkedCall(this.runtime, view, target, principalOf(ctx), this.hooks)
  }

  private readonly hooks = {
    finished: (call: ParkedCall) => {
      if (this.calls.get(call.id) !== call) return
      const timer = setTimeout(() => {
        if (this.calls.get(call.id) === call) this.calls.delete(call.id)
      }, LINGER_MS)
      timer.unref()
    },
    mayPark: (call: ParkedCall) => this.calls.has(call.id) || this.calls.size < MAX_PARKED,
  }

  /** The requestState naming `call` for its next round; keeps the call. */
  async mint(call: ParkedCall, ctx: ServerContext): Promise<string> {
    this.calls.set(call.id, call)
    const round = (this.rounds.get(call) ?? 0) + 1
    this.rounds.set(call, round)
    return STATE_PREFIX + (await this.codec.mint({ call: call.id, round }, ctx))
  }

  /**
   * The parked call a verified state names, for a retry of the same
   * request by the same principal; else -32602 (it ended long ago, it was
   * made by another replica or for another request).
   */
  resume(state: ParkedState, target: CallTarget, ctx: ServerContext): ParkedCall {
    const call = this.calls.get(state.parked.call)
    if (
      !call ||
      call.principal !== principalOf(ctx) ||
      call.target.method !== target.method ||
      call.target.name !== target.name
    ) {
      throw new ProtocolError(
        RpcCode.invalidParams,
        'requestState names no request mycelium is waiting on (it ended more than a minute ago, was made for another request, or by another replica): send the request again without requestState and inputResponses',
      )
    }
    return call
  }

  /** Cancels every parked call (shutdown). */
  close(): void {
    for (const call of this.calls.values()) call.cancellation.cancel('mycelium is shutting down')
    this.calls.clear()
  }
}
