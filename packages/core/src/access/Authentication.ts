import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ChangeFeedService } from "../changes/ChangeFeed.js"
import { makeVersionedCache } from "../changes/VersionedCache.js"
import { AuthenticationFailed, InvalidRequest, PermissionDenied } from "../platform/Errors.js"
import { isUuid } from "../platform/Ids.js"
import { nowMs } from "../platform/Time.js"
import type { AccessStoreService } from "./AccessStore.js"
import { type Caller, callerNoun, type Program, type ProgramCaller } from "./Records.js"
import { hashSecret, looksLikeSecret } from "./Secrets.js"

/** Bounds of the key cache: it holds while no change is published, at most this long and this many. */
export const API_KEY_CACHE_MAX_AGE_MS = 60_000
const API_KEY_CACHE_MAX_ENTRIES = 10_000
/** Bound on remembered programs (X-Program-ID lookups); the oldest goes first past it. */
const PROGRAM_CACHE_MAX_ENTRIES = 10_000

/** The prefix of OAuth access tokens (docs/oauth.md); API key secrets start with `sk_`. */
export const ACCESS_TOKEN_PREFIX = "at_"

/** Resolves an access token's hash to the caller it acts as: none when unknown, revoked, or its grant or client is gone. */
export type AccessTokenResolver = (tokenHash: string) => Effect.Effect<Option.Option<Caller>, SqlError.SqlError>

/** True when the caller's key may act on the program (keys limited by program_ids). */
export const canSeeProgram = (caller: Caller, programId: string): boolean =>
  caller.programIds === null || caller.programIds.includes(programId)

const NO_KEY = "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'."
const MALFORMED = "Malformed Authorization header. Send 'Authorization: Bearer <API_KEY>'."

/** The bearer secret of an Authorization header, or the message saying why it has none. */
const bearerSecret = (authorization: string | undefined): { readonly secret: string } | { readonly refused: string } => {
  if (authorization === undefined || authorization.trim() === "") return { refused: NO_KEY }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim())
  return match === null || !looksLikeSecret(match[1]!) ? { refused: MALFORMED } : { secret: match[1]! }
}

/**
 * Authentication and program scoping over the store. Keys are cached by secret hash while the
 * committed version of the change feed is the one they were read at: a revocation anywhere
 * publishes a change, so the very next request on any node reads again — not only once the
 * notification has arrived (docs/operations.md#running-several-nodes).
 * Unknown keys are never cached. Programs are never updated or deleted: a found one is kept.
 */
export const makeAuthentication = (store: AccessStoreService, feed: ChangeFeedService, accessTokens: AccessTokenResolver) => {
  const keyCache = makeVersionedCache<Caller>({ maxEntries: API_KEY_CACHE_MAX_ENTRIES, maxAgeMs: API_KEY_CACHE_MAX_AGE_MS })
  const programCache = new Map<string, Program>()

  /** The caller of a secret not in the cache (or whose cached access token has expired). */
  const lookUp = (secret: string, secretHash: string, version: Option.Option<string>, now: number) =>
    Effect.gen(function* () {
      if (secret.startsWith(ACCESS_TOKEN_PREFIX)) {
        const caller = yield* accessTokens(secretHash)
        if (Option.isNone(caller) || caller.value.oauth === undefined || caller.value.oauth.expiresAtMs <= now) {
          return yield* new AuthenticationFailed({ message: "Invalid, expired or revoked access token." })
        }
        keyCache.set(secretHash, caller.value, version, now)
        return caller.value
      }
      const key = yield* store.findActiveKeyByHash(secretHash)
      if (Option.isNone(key)) return yield* new AuthenticationFailed({ message: "Invalid API key." })
      const caller: Caller = {
        apiKeyId: key.value.id,
        organizationId: key.value.organization_id,
        role: key.value.role,
        programIds: key.value.program_ids,
        panReveal: key.value.pan_reveal,
        cardDisplay: key.value.card_display,
        inboundFunding: key.value.inbound_funding,
        network: key.value.network
      }
      keyCache.set(secretHash, caller, version, now)
      return caller
    })

  /**
   * Resolves `Authorization: Bearer <secret>` to the caller; 401 when missing, malformed, unknown
   * or revoked. A cached caller is answered without a generator of its own: this runs for every
   * request (docs/operations.md#volume, "The Node side, profiled").
   */
  const authenticate = (authorization: string | undefined): Effect.Effect<Caller, AuthenticationFailed | SqlError.SqlError> => {
    const bearer = bearerSecret(authorization)
    if ("refused" in bearer) return Effect.fail(new AuthenticationFailed({ message: bearer.refused }))
    const { secret } = bearer
    const secretHash = hashSecret(secret)
    return Effect.flatMap(nowMs, (now) =>
      // Seen before the read: a change committed meanwhile retires what is read.
      Effect.flatMap(feed.committed, (version) => {
        const cached = keyCache.get(secretHash, version, now)
        // A cached access token still ends at its expiry (revocations retire it through the feed).
        if (cached !== undefined && (cached.oauth === undefined || cached.oauth.expiresAtMs > now)) return Effect.succeed(cached)
        return lookUp(secret, secretHash, version, now)
      })
    )
  }

  /** Checks X-Program-ID: 400 when missing or malformed, 403 when the key cannot use that program. */
  const resolveProgram = (
    caller: Caller,
    header: string | undefined
  ): Effect.Effect<ProgramCaller, InvalidRequest | PermissionDenied | SqlError.SqlError> => {
    if (header === undefined || header.trim() === "") {
      return Effect.fail(new InvalidRequest({ message: "The X-Program-ID header is required.", param: "X-Program-ID" }))
    }
    const programId = header.trim()
    if (!isUuid(programId)) {
      return Effect.fail(new InvalidRequest({ message: "X-Program-ID must be a UUID.", param: "X-Program-ID" }))
    }
    // Built only when refused: constructing an error captures a stack (≈ 35 µs per request).
    const denied = () =>
      new PermissionDenied({ message: `${callerNoun(caller)} cannot access the program named by X-Program-ID.`, param: "X-Program-ID" })
    const id = programId.toLowerCase()
    if (!canSeeProgram(caller, id)) return Effect.fail(denied())
    const cacheKey = `${caller.organizationId}/${id}`
    const cached = programCache.get(cacheKey)
    if (cached !== undefined) return Effect.succeed({ ...caller, program: cached })
    return Effect.flatMap(store.findProgram(caller.organizationId, id), (program) => {
      if (Option.isNone(program)) return Effect.fail(denied())
      if (programCache.size >= PROGRAM_CACHE_MAX_ENTRIES) programCache.delete(programCache.keys().next().value!)
      programCache.set(cacheKey, program.value)
      return Effect.succeed({ ...caller, program: program.value })
    })
  }

  return {
    authenticate,
    resolveProgram,
    /** Stops trusting a key this process revokes at once (the published change retires it everywhere at commit). */
    forgetKey: (apiKeyId: string) => keyCache.forget((caller) => caller.apiKeyId === apiKeyId),
    /** Stops trusting this process's cached access tokens of grants it revokes (the published change does it everywhere at commit). */
    forgetGrants: (grantIds: ReadonlyArray<string>) =>
      keyCache.forget((caller) => caller.oauth !== undefined && grantIds.includes(caller.oauth.grantId))
  }
}
