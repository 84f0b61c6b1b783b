import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { AuthenticationFailed, InvalidRequest, PermissionDenied } from "../platform/Errors.js"
import { isUuid } from "../platform/Ids.js"
import { nowMs } from "../platform/Time.js"
import type { AccessStoreService } from "./AccessStore.js"
import type { Caller, Program, ProgramCaller } from "./Records.js"
import { hashSecret, looksLikeSecret } from "./Secrets.js"

/** How long an authenticated key is trusted without asking the database again. */
export const API_KEY_CACHE_TTL_MS = 5_000
/** Bound on remembered programs (X-Program-ID lookups); past it the cache starts over. */
const PROGRAM_CACHE_MAX_ENTRIES = 10_000
/** Bound on cached keys; past it the cache starts over. */
const API_KEY_CACHE_MAX_ENTRIES = 10_000

/**
 * Authenticated callers by secret hash, so the hot path skips a database read. Revoking a key in
 * this process evicts it at once; the generation counter keeps a lookup that raced with a
 * revocation from caching the key again. Unknown keys are never cached.
 */
const makeKeyCache = () => {
  const entries = new Map<string, { readonly caller: Caller; readonly expiresAtMs: number }>()
  const cache = {
    generation: 0,
    get(secretHash: string, nowMs: number): Caller | undefined {
      const entry = entries.get(secretHash)
      if (entry === undefined) return undefined
      if (entry.expiresAtMs <= nowMs) {
        entries.delete(secretHash)
        return undefined
      }
      return entry.caller
    },
    set(secretHash: string, caller: Caller, nowMs: number, generation: number) {
      if (generation !== cache.generation) return
      if (entries.size >= API_KEY_CACHE_MAX_ENTRIES) entries.clear()
      entries.set(secretHash, { caller, expiresAtMs: nowMs + API_KEY_CACHE_TTL_MS })
    },
    forget(apiKeyId: string) {
      cache.generation += 1
      for (const [hash, entry] of entries) if (entry.caller.apiKeyId === apiKeyId) entries.delete(hash)
    }
  }
  return cache
}

/** True when the caller's key may act on the program (keys limited by program_ids). */
export const canSeeProgram = (caller: Caller, programId: string): boolean =>
  caller.programIds === null || caller.programIds.includes(programId)

/** The bearer secret of an Authorization header, or the reason it has none. */
const bearerSecret = (authorization: string | undefined): Effect.Effect<string, AuthenticationFailed> => {
  if (authorization === undefined || authorization.trim() === "") {
    return Effect.fail(new AuthenticationFailed({ message: "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'." }))
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim())
  return match === null || !looksLikeSecret(match[1]!)
    ? Effect.fail(new AuthenticationFailed({ message: "Malformed Authorization header. Send 'Authorization: Bearer <API_KEY>'." }))
    : Effect.succeed(match[1]!)
}

/**
 * Authentication and program scoping over the store, with the process caches of keys (short-lived)
 * and programs (programs are never updated or deleted, so a found program is remembered for good).
 */
export const makeAuthentication = (store: AccessStoreService) => {
  const keyCache = makeKeyCache()
  const programCache = new Map<string, Program>()

  /** Resolves `Authorization: Bearer <secret>` to the caller; 401 when missing, malformed, unknown or revoked. */
  const authenticate = (authorization: string | undefined): Effect.Effect<Caller, AuthenticationFailed | SqlError.SqlError> =>
    Effect.gen(function*() {
      const secretHash = hashSecret(yield* bearerSecret(authorization))
      const now = yield* nowMs
      const cached = keyCache.get(secretHash, now)
      if (cached !== undefined) return cached
      const generation = keyCache.generation
      const key = yield* store.findActiveKeyByHash(secretHash)
      if (Option.isNone(key)) return yield* new AuthenticationFailed({ message: "Invalid API key." })
      const caller: Caller = {
        apiKeyId: key.value.id,
        organizationId: key.value.organization_id,
        role: key.value.role,
        programIds: key.value.program_ids,
        panReveal: key.value.pan_reveal,
        cardDisplay: key.value.card_display
      }
      keyCache.set(secretHash, caller, now, generation)
      return caller
    })

  /** Checks X-Program-ID: 400 when missing or malformed, 403 when the key cannot use that program. */
  const resolveProgram = (
    caller: Caller,
    header: string | undefined
  ): Effect.Effect<ProgramCaller, InvalidRequest | PermissionDenied | SqlError.SqlError> =>
    Effect.gen(function*() {
      if (header === undefined || header.trim() === "") {
        return yield* new InvalidRequest({ message: "The X-Program-ID header is required.", param: "X-Program-ID" })
      }
      const programId = header.trim()
      if (!isUuid(programId)) {
        return yield* new InvalidRequest({ message: "X-Program-ID must be a UUID.", param: "X-Program-ID" })
      }
      // Built only when refused: constructing an error captures a stack (≈ 35 µs per request).
      const denied = () =>
        new PermissionDenied({ message: "This API key cannot access the program named by X-Program-ID.", param: "X-Program-ID" })
      const id = programId.toLowerCase()
      if (!canSeeProgram(caller, id)) return yield* denied()
      const cacheKey = `${caller.organizationId}/${id}`
      const cached = programCache.get(cacheKey)
      if (cached !== undefined) return { ...caller, program: cached }
      const program = yield* store.findProgram(caller.organizationId, id)
      if (Option.isNone(program)) return yield* denied()
      if (programCache.size >= PROGRAM_CACHE_MAX_ENTRIES) programCache.clear()
      programCache.set(cacheKey, program.value)
      return { ...caller, program: program.value }
    })

  return {
    authenticate,
    resolveProgram,
    /** Stops trusting a revoked key in this process at once (other processes within API_KEY_CACHE_TTL_MS). */
    forgetKey: (apiKeyId: string) => keyCache.forget(apiKeyId)
  }
}
