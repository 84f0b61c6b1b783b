import * as dns from "node:dns"
import * as net from "node:net"

/**
 * The SSRF guard (docs/webhooks.md#ssrf-guard). Some addresses are refused in every environment:
 * IPv4 link-local (where clouds serve instance metadata and credentials), the other known
 * metadata addresses, deprecated IPv6 site-local and Teredo (whose tunnels reach IPv4 hosts the
 * guard cannot judge). Unless private targets are allowed (sandbox default), loopback, private,
 * link-local, CGNAT, unspecified, multicast and reserved addresses are refused too. It is applied
 * when a subscription is saved (on every address the host resolves to) and again when a delivery
 * connects (a `lookup` hook on the HTTP agent), so a DNS answer that changes after validation
 * (rebinding) cannot bypass it.
 */
const alwaysBlocked = new net.BlockList()
for (const [network, prefix] of [
  ["169.254.0.0", 16], // link-local: 169.254.169.254 (AWS, GCP, Azure, OCI), 169.254.170.2 (ECS) …
  ["100.100.100.200", 32] // Alibaba Cloud metadata
] as const)
  alwaysBlocked.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["fd00:ec2::", 32], // AWS metadata over IPv6 (fd00:ec2::254, fd00:ec2::23)
  ["fec0::", 10], // site-local, deprecated (RFC 3879) but still routed by some stacks
  ["2001::", 32] // Teredo: tunnels to IPv4 hosts
] as const)
  alwaysBlocked.addSubnet(network, prefix, "ipv6")

const blocked = new net.BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, incl. broadcast
] as const)
  blocked.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
  ["2001:db8::", 32], // documentation
  ["100::", 64], // discard
  ["64:ff9b:1::", 48] // local-use NAT64 (RFC 8215): translates to private networks by design
] as const)
  blocked.addSubnet(network, prefix, "ipv6")

/**
 * IPv6 forms that embed an IPv4 address, judged by that address: mapped (::ffff:a.b.c.d, also
 * written ::ffff:7f00:1), IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16).
 */
const embeddedIpv4 = (address: string): string | undefined => {
  const lower = address.toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return mapped[1]
  const words = expandIpv6(lower)
  if (words === undefined) return undefined
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const zero = (from: number, to: number) => words.slice(from, to).every((word) => word === 0)
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!) // ::ffff:0:0/96, mapped
  if (zero(0, 6)) return v4(words[6]!, words[7]!) // ::/96, IPv4-compatible (deprecated)
  if (zero(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6]!, words[7]!) // ::ffff:0:0:0/96, translated
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6]!, words[7]!)
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!)
  return undefined
}

const expandIpv6 = (address: string): Array<number> | undefined => {
  if (!net.isIPv6(address)) return undefined
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number]
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split("::") as [string, string | undefined]
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((word) => parseInt(word, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0)
  const words = [...left, ...fill, ...right]
  return words.length === 8 ? words : undefined
}

/** True when `address` (v4 or v6) is in `list`, judging IPv6 forms that embed an IPv4 address by it. */
const listed = (list: net.BlockList, bare: string, family: number): boolean => {
  if (family === 4) return list.check(bare, "ipv4")
  if (list.check(bare, "ipv6")) return true
  const v4 = embeddedIpv4(bare)
  return v4 !== undefined && list.check(v4, "ipv4")
}

/**
 * True when a literal IP address is one a webhook may not reach: always the metadata, site-local
 * and Teredo addresses; the private ones too unless `allowPrivate`.
 */
export const isForbiddenAddress = (address: string, allowPrivate = false): boolean => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const family = net.isIP(bare)
  if (family === 0) return true // not an address at all: refuse rather than guess
  return listed(alwaysBlocked, bare, family) || (!allowPrivate && listed(blocked, bare, family))
}

/** What a webhook URL may reach: private targets or not, and the ports it may name (null or absent: any). */
export interface UrlPolicy {
  readonly allowPrivate: boolean
  readonly allowedPorts?: ReadonlyArray<number> | null | undefined
}

/** The policy of the settings in force (ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS, ISSUING_WEBHOOK_ALLOWED_PORTS). */
export const urlPolicy = (settings: {
  readonly webhookAllowPrivateUrls: boolean
  readonly webhookAllowedPorts: ReadonlyArray<number> | null
}): UrlPolicy => ({ allowPrivate: settings.webhookAllowPrivateUrls, allowedPorts: settings.webhookAllowedPorts })

/** The port a URL connects to: the one it names, else its scheme's. */
const portOf = (url: URL): number => (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80)

const FORBIDDEN = "a loopback, private, link-local or metadata address"

/**
 * Why a URL is refused, or undefined when it may be used (the reason names `url`, never its host:
 * messages do not repeat input). A boolean policy is `allowPrivate` with any port. The host is
 * resolved; with private targets allowed (sandbox) a host that does not resolve is let through,
 * since nothing it could reach is known yet.
 */
export const checkWebhookUrl = async (url: URL, policy: boolean | UrlPolicy): Promise<string | undefined> => {
  const { allowPrivate, allowedPorts } = typeof policy === "boolean" ? { allowPrivate: policy, allowedPorts: null } : policy
  if (allowedPorts != null && !allowedPorts.includes(portOf(url))) {
    return `url must use one of the ports ${allowedPorts.join(", ")} (the port of its scheme when it names none)`
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (net.isIP(host) !== 0) {
    return isForbiddenAddress(host, allowPrivate) ? `url must not point at ${FORBIDDEN}` : undefined
  }
  let addresses: Array<dns.LookupAddress>
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true })
  } catch {
    return allowPrivate ? undefined : "url host does not resolve"
  }
  if (addresses.length === 0) return allowPrivate ? undefined : "url host does not resolve"
  return addresses.some((entry) => isForbiddenAddress(entry.address, allowPrivate)) ? `url host resolves to ${FORBIDDEN}` : undefined
}

/**
 * A `lookup` for node:net that refuses forbidden addresses at connect time: with `allowPrivate`
 * only those refused in every environment.
 */
export const makeGuardedLookup =
  (allowPrivate: boolean): net.LookupFunction =>
  (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return (callback as any)(error)
      const list = addresses as unknown as Array<dns.LookupAddress>
      const bad = list.find((entry) => isForbiddenAddress(entry.address, allowPrivate))
      if (bad !== undefined || list.length === 0) {
        const refused = Object.assign(new Error(`Refused to connect to ${hostname}: forbidden address ${bad?.address ?? "none"}`), {
          code: "ESSRFBLOCKED"
        })
        return (callback as any)(refused)
      }
      if ((options as dns.LookupOptions).all) return (callback as any)(null, list)
      return (callback as any)(null, list[0]!.address, list[0]!.family)
    })
  }
