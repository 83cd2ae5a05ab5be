import { digestOf, pinnedDefinition, type PinKind } from './definitions.js'
import { hiddenTextOf, HIDDEN_TEXT_NAMES, type HiddenTextKind } from './hidden-text.js'
import { LIST_OF, type DefinitionLock } from './lock.js'

/**
 * Why a child's tool or prompt is withheld: its definition differs from the
 * lock (`changed`), a pinned server offers it new (`added`), its server is
 * not in the lock (`unpinned`), or it holds hidden text (`hidden`, lock or
 * not).
 */
type WithholdReason = 'changed' | 'added' | 'unpinned' | 'hidden'

export interface Withholding {
  reason: WithholdReason
  /** For `hidden`: the kinds of text found. */
  text?: readonly HiddenTextKind[]
}

/** What a person is told of a withheld item, after its id (`withheld fs:read_file: …`). */
export function withholdingText(w: Withholding): string {
  switch (w.reason) {
    case 'changed':
      return 'its definition changed since it was pinned; review with myc pin'
    case 'added':
      return 'it is new since its server was pinned; review with myc pin'
    case 'unpinned':
      return 'its server is not in mycelium.lock.json; review with myc pin'
    case 'hidden':
      return `its definition holds hidden text (${(w.text ?? []).map((k) => HIDDEN_TEXT_NAMES[k]).join(', ')}) that a model reads and a person does not see`
  }
}

interface Facts {
  digest: string
  hidden: HiddenTextKind[]
}

/**
 * Decides, for each definition a child lists, whether it is withheld: hidden
 * text first (whatever the lock says, unless the server's config allows it),
 * then, with a lock, whether the lock approves this exact definition. Without
 * a lock nothing is withheld for a change: pinning is off. A definition's
 * digest and hidden text are worked out once per object the child sent.
 */
export class PinGate {
  private readonly facts = new WeakMap<object, Facts>()

  constructor(
    private lock: DefinitionLock | undefined,
    private readonly allowsHiddenText: (server: string) => boolean,
  ) {}

  /** A lock read again (it changed on disk), or none (it was removed). */
  setLock(lock: DefinitionLock | undefined): void {
    this.lock = lock
  }

  /** Whether a lock is in force. */
  get pinning(): boolean {
    return this.lock !== undefined
  }

  judge(server: string, kind: PinKind, def: { name: string }): Withholding | undefined {
    const facts = this.factsOf(kind, def)
    if (facts.hidden.length > 0 && !this.allowsHiddenText(server)) return { reason: 'hidden', text: facts.hidden }
    if (!this.lock) return undefined
    const pins = this.lock.servers.get(server)
    if (!pins) return { reason: 'unpinned' }
    const entry = pins[LIST_OF[kind]].get(def.name)
    if (!entry) return { reason: 'added' }
    return entry.digest === facts.digest ? undefined : { reason: 'changed' }
  }

  private factsOf(kind: PinKind, def: object): Facts {
    let facts = this.facts.get(def)
    if (!facts) {
      const pinned = pinnedDefinition(kind, def)
      facts = { digest: digestOf(pinned), hidden: hiddenTextOf(pinned) }
      this.facts.set(def, facts)
    }
    return facts
  }
}
