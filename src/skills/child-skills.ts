import type { Skill as SkillEntry } from '@modelcontextprotocol/core/ext/skills'

/**
 * Where a child's skills appear: `skill://<server>/<the child's path>`. A
 * child's `skill://path` keeps its path; another scheme keeps its authority
 * and path (`https://host/x` → `skill://<server>/host/x`), so two children's
 * same-named skills stay distinct. Pure.
 */
export function mapChildUri(server: string, childUri: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(childUri)
  return `skill://${server}/${m ? m[2] : childUri}`
}

/** A child's skill entry as myc serves it: URIs mapped, frontmatter and digests untouched. */
export function mapChildEntry(server: string, entry: SkillEntry): SkillEntry {
  return {
    ...entry,
    uri: mapChildUri(server, entry.uri),
    resources: Array.isArray(entry.resources)
      ? entry.resources.map((r) => ({ ...r, uri: mapChildUri(server, r.uri) }))
      : entry.resources,
  }
}

/** Maps myc URIs under `skill://<server>/` back to the child's, by the skill roots its listing gave. */
export class ChildSkillRoutes {
  private readonly roots: Array<{ mapped: string; child: string }> = []

  constructor(
    readonly server: string,
    entries: readonly SkillEntry[],
  ) {
    for (const e of entries) {
      const childRoot = e.uri.replace(/SKILL\.md$/, '')
      this.roots.push({ mapped: mapChildUri(server, childRoot), child: childRoot })
    }
    // Longest first, so nested roots win.
    this.roots.sort((a, b) => b.mapped.length - a.mapped.length)
  }

  /** The child's URI for a myc URI under one of its skills (files, directories, "dynamic" skills), or undefined. */
  toChild(uri: string): string | undefined {
    for (const r of this.roots) {
      if (uri === r.mapped.replace(/\/$/, '')) return r.child.replace(/\/$/, '')
      if (uri.startsWith(r.mapped)) return r.child + uri.slice(r.mapped.length)
    }
    return undefined
  }
}
