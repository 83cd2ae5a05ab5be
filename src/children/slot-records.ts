import { ChildRecord } from './child-record.js'

/** The slot of a server's own process: a shared server's, or a scoped server's (the local person's instance). */
export const OWN_SLOT = ''

/** The slot of a scoped server's instance, keyed as the instances are: its session (`scope: "session"`), else its person. */
export function slotOf(owner: { person: string; session?: string }): string {
  return owner.session !== undefined ? `s\0${owner.session}` : `p\0${owner.person}`
}

/** The slot a 2025 session's instances are kept under. */
export function sessionSlot(session: string): string {
  return slotOf({ person: '', session })
}

/** A slot's record, and how many connections (processes) made for the slot hold it now. */
interface Entry {
  record: ChildRecord
  users: number
}

/** One server's slots, as its instance pool takes and lets go of them (children/instances.ts). */
export interface ServerRecords {
  take(slot: string): ChildRecord
  release(slot: string, record: ChildRecord): void
}

/**
 * What clients asked of each server, by slot (children/child-record.ts):
 * the server's own process (OWN_SLOT), and each person or 2025 session of a
 * scoped server (docs/team.md), whether an instance runs for them or not.
 * Every connection made for a slot takes its record (a restart, the
 * person's next instance after an idle stop, the cap, a changed secret, a
 * reload of the server: the same record), so that nothing a person asked
 * goes with a process. A record is forgotten once nothing is held in it and
 * no connection holds it, and a session's with its session.
 */
export class SlotRecords {
  private readonly servers = new Map<string, Map<string, Entry>>()

  /** The record of `server`'s `slot`, made if need be, to record in now (no process of the slot needs to run). */
  of(server: string, slot: string): ChildRecord {
    return this.entry(server, slot).record
  }

  /** The record a connection made for `server`'s `slot` keeps, until it lets go of it (`release`). */
  take(server: string, slot: string): ChildRecord {
    const entry = this.entry(server, slot)
    entry.users++
    return entry.record
  }

  /** A connection of `server`'s `slot` stopped for good: the record is forgotten if it holds nothing (and no other holds it). */
  release(server: string, slot: string, record: ChildRecord): void {
    const entry = this.servers.get(server)?.get(slot)
    if (entry?.record !== record) return
    entry.users--
    this.dropIfIdle(server, slot, entry)
  }

  /** One server's slots, for its instance pool. */
  forServer(server: string): ServerRecords {
    return {
      take: (slot) => this.take(server, slot),
      release: (slot, record) => this.release(server, slot, record),
    }
  }

  /** A 2025 session ended: what was asked of its instances goes (every server's). */
  endSession(session: string): void {
    const slot = sessionSlot(session)
    for (const [server, slots] of this.servers) if (slots.delete(slot) && slots.size === 0) this.servers.delete(server)
  }

  /** Whether `server`'s `slot` keeps a record now. */
  has(server: string, slot: string): boolean {
    return this.servers.get(server)?.has(slot) === true
  }

  private entry(server: string, slot: string): Entry {
    let slots = this.servers.get(server)
    if (!slots) this.servers.set(server, (slots = new Map()))
    let entry = slots.get(slot)
    if (!entry) {
      const made: Entry = { record: new ChildRecord(() => this.dropIfIdle(server, slot, made)), users: 0 }
      slots.set(slot, (entry = made))
    }
    return entry
  }

  private dropIfIdle(server: string, slot: string, entry: Entry): void {
    const slots = this.servers.get(server)
    if (entry.users > 0 || !entry.record.empty || slots?.get(slot) !== entry) return
    slots.delete(slot)
    if (slots.size === 0) this.servers.delete(server)
  }
}
