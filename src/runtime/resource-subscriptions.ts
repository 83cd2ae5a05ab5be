/**
 * Which holders (client connections) subscribed to which resources of which
 * server: a server's listen asks for the union of its holders' resources.
 */
export class ResourceSubscriptions<Holder> {
  private readonly byServer = new Map<string, Map<string, Set<Holder>>>()

  /** `holder` subscribed to `uri` of `server`; true when that server's set of resources grew. */
  add(server: string, uri: string, holder: Holder): boolean {
    let uris = this.byServer.get(server)
    if (!uris) this.byServer.set(server, (uris = new Map()))
    const holders = uris.get(uri)
    if (holders) {
      holders.add(holder)
      return false
    }
    uris.set(uri, new Set([holder]))
    return true
  }

  /** Whether `holder` is subscribed to `uri` of `server`. */
  has(server: string, uri: string, holder: Holder): boolean {
    return this.byServer.get(server)?.get(uri)?.has(holder) ?? false
  }

  /** `holder` unsubscribed from `uri`; the server whose set of resources shrank, if one did. */
  remove(holder: Holder, uri: string): string | undefined {
    for (const [server, uris] of this.byServer) {
      const holders = uris.get(uri)
      if (!holders?.delete(holder) || holders.size > 0) continue
      uris.delete(uri)
      if (uris.size === 0) this.byServer.delete(server)
      return server
    }
    return undefined
  }

  /** `holder` is gone: every subscription of it is dropped; the servers whose sets of resources shrank. */
  removeHolder(holder: Holder): string[] {
    const shrank: string[] = []
    for (const [server, uris] of this.byServer) {
      for (const [uri, holders] of uris) {
        if (!holders.delete(holder) || holders.size > 0) continue
        uris.delete(uri)
        if (!shrank.includes(server)) shrank.push(server)
      }
      if (uris.size === 0) this.byServer.delete(server)
    }
    return shrank
  }

  /** The resources of `server` some holder subscribed to, sorted. */
  uris(server: string): string[] {
    return [...(this.byServer.get(server)?.keys() ?? [])].sort()
  }
}
