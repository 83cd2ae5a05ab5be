import { secretCommand } from '../children/supervisor.js'
import { SecretStore } from '../oauth/secret-store.js'
import { LOCAL_PRINCIPAL } from '../oauth/token-store.js'

/** Stores kept open at once (each caches what it read); beyond, the one used longest ago is let go. */
const KEPT = 1_024

/** Where the route that lets a person set their own secret is (`http.selfServiceSecrets`). */
export const SECRETS_PATH = '/secrets'

/**
 * People's own secrets, what `{ "secret": "NAME" }` in a scoped server's
 * `env` reads for the person an instance runs for (docs/team.md): each
 * person's entries of the sealed secret store, in the user's config folder,
 * or (`myc serve --http` with a Redis session store) in Redis for every
 * replica; and how a person gets a missing one set.
 */
export class PersonSecretStores {
  private readonly open = new Map<string, SecretStore>()
  private make: ((person: string) => SecretStore) | undefined
  /** `http.selfServiceSecrets`: people set their own over HTTP (`PUT /secrets/NAME`). */
  selfService = false

  constructor(private readonly env: Record<string, string | undefined>) {}

  /** `person`'s store. */
  store(person: string): SecretStore {
    let store = this.open.get(person)
    if (store) {
      this.open.delete(person)
    } else {
      // The local person's are this machine's (`myc secrets set NAME`), wherever other people's are kept.
      const make = person === LOCAL_PRINCIPAL ? undefined : this.make
      store = make?.(person) ?? SecretStore.forUser(this.env, { principal: person })
      if (this.open.size >= KEPT) this.open.delete(this.open.keys().next().value!)
    }
    this.open.set(person, store)
    return store
  }

  /** Keeps other people's stores elsewhere from now on (the replicas' Redis); the local person's stay this machine's. */
  share(make: (person: string) => SecretStore): void {
    this.make = make
    this.open.clear()
  }

  /** What a person whose secret `name` is missing is told to do. */
  fix(person: string, name: string): string {
    const command = secretCommand(person, name)
    return this.selfService && person !== LOCAL_PRINCIPAL
      ? `${command}; or set it yourself: PUT ${SECRETS_PATH}/${name} on this myc with your myc credential, the value as the body`
      : command
  }
}
