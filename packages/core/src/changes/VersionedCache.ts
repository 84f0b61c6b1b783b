import { Option } from "effect"

/** Bounds of a cache: how many entries it keeps and how long one is kept at most. */
export interface CacheBounds {
  readonly maxEntries: number
  readonly maxAgeMs: number
}

/**
 * A bounded cache whose entries hold while the change feed's version is the one they were filled
 * at: any published change (on any node) retires every entry at once. No version (feed down)
 * means no hit and no fill. Oldest entries go first past `maxEntries`; none outlives `maxAgeMs`.
 */
export const makeVersionedCache = <V>(bounds: CacheBounds) => {
  const entries = new Map<string, { readonly value: V; readonly version: string; readonly filledAtMs: number }>()
  return {
    get(key: string, version: Option.Option<string>, nowMs: number): V | undefined {
      if (Option.isNone(version)) return undefined
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (entry.version !== version.value || nowMs - entry.filledAtMs >= bounds.maxAgeMs) {
        entries.delete(key)
        return undefined
      }
      return entry.value
    },
    /** Keeps a value read after `version` was seen (so a change committed meanwhile retires it). */
    set(key: string, value: V, version: Option.Option<string>, nowMs: number): void {
      if (Option.isNone(version)) return
      if (entries.size >= bounds.maxEntries && !entries.has(key)) entries.delete(entries.keys().next().value!)
      entries.set(key, { value, version: version.value, filledAtMs: nowMs })
    },
    /** Drops the entries whose value matches (this process's own change, before any version moves). */
    forget(matches: (value: V) => boolean): void {
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key)
    },
    get size() {
      return entries.size
    }
  }
}

/** A cache invalidated by the change feed. */
export type VersionedCache<V> = ReturnType<typeof makeVersionedCache<V>>
