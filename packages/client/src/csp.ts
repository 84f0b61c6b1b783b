/**
 * The directive that governs frames (CSP3 §6.1.2, effective directive `frame-src`): `frame-src`,
 * else `child-src`, else `default-src`; none of them means frames are not restricted.
 */
const FRAME_FALLBACK = ["frame-src", "child-src", "default-src"] as const

/** The origin of an http(s) URL, or a TypeError. */
const originOf = (embedOrigin: string): string => {
  let url: URL
  try {
    url = new URL(embedOrigin)
  } catch {
    throw new TypeError("withCardDisplayFrameSrc: embedOrigin must be an absolute http(s) URL or origin")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("withCardDisplayFrameSrc: embedOrigin must be an http(s) URL or origin")
  }
  return url.origin
}

/** True when `sources` already lets `origin` load as a frame: the origin itself, `*`, or its scheme. */
const allows = (sources: ReadonlyArray<string>, origin: string): boolean => {
  const scheme = `${new URL(origin).protocol}`
  return sources.some((source) => {
    const lower = source.toLowerCase()
    return lower === "*" || lower === scheme || lower.replace(/\/+$/, "") === origin
  })
}

/** One policy (no commas) with the origin added to the directive that governs frames. */
const addToPolicy = (policy: string, origin: string): string => {
  const segments = policy.split(";")
  const directives = segments.map((segment) => {
    const tokens = segment
      .trim()
      .split(/\s+/)
      .filter((token) => token !== "")
    return { name: (tokens[0] ?? "").toLowerCase(), sources: tokens.slice(1) }
  })
  // Per CSP, only the first occurrence of a directive counts.
  const firstIndex = (name: string) => directives.findIndex((directive) => directive.name === name)
  const governing = FRAME_FALLBACK.map(firstIndex).find((index) => index >= 0)
  if (governing === undefined) return policy
  const { name, sources } = directives[governing]!
  if (allows(sources, origin)) return policy
  const kept = sources.filter((source) => source.toLowerCase() !== "'none'")
  const leading = /^\s*/.exec(segments[governing]!)![0]
  const trailing = /\s*$/.exec(segments[governing]!)![0]
  segments[governing] = `${leading}${[name, ...kept, origin].join(" ")}${trailing}`
  return segments.join(";")
}

/**
 * A host page's Content-Security-Policy with the platform's origin allowed to load the card embed
 * iframe (docs/card-data.md, secure display rule 3): added to `frame-src`, else to `child-src`, else
 * to `default-src` — whichever governs frames —, replacing `'none'`, never twice, every other
 * directive untouched. A policy that restricts frames nowhere is returned as it is; each policy of a
 * comma-separated list is treated alike. `embedOrigin` may be an origin or any URL on it (`embed_url`).
 */
export const withCardDisplayFrameSrc = (existingPolicy: string, embedOrigin: string): string => {
  const origin = originOf(embedOrigin)
  return existingPolicy
    .split(",")
    .map((policy) => addToPolicy(policy, origin))
    .join(",")
}
