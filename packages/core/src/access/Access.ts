import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { AuthenticationFailed, InvalidRequest, NotFound, PermissionDenied } from "../platform/Errors.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso, nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { AccessStore } from "./AccessStore.js"
import type { ApiKey, ApiKeyWithSecret, Caller, Program, ProgramCaller, Role } from "./Records.js"
import { hashSecret, looksLikeSecret, newApiKeySecret } from "./Secrets.js"

/** Default BIN of a new program (CONTRACT §2). */
export const DEFAULT_BIN = "400000"
/** Largest number of programs one key may be limited to. */
export const MAX_PROGRAM_IDS = 100

/** What `createOrganization` returns: the CLI prints it as one JSON object. */
export interface NewOrganization {
  readonly organization_id: string
  readonly program_id: string
  readonly api_key: string
}

export interface CreateProgramInput {
  readonly name: string
  readonly bin?: string | undefined
}

export interface CreateApiKeyInput {
  readonly name: string
  readonly role: Role
  readonly program_ids?: ReadonlyArray<string> | null | undefined
  readonly pan_reveal?: boolean | undefined
}

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

const requireAdmin = (caller: Caller): Effect.Effect<void, PermissionDenied> =>
  caller.role === "admin"
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: "This operation requires an admin API key.", param: null }))

const canSeeProgram = (caller: Caller, programId: string) =>
  caller.programIds === null || caller.programIds.includes(programId)

/** Organizations, programs, API keys, authentication and program scoping. */
export class Access extends Effect.Service<Access>()("@issuing/core/Access", {
  effect: Effect.gen(function*() {
    const store = yield* AccessStore
    const transactor = yield* Transactor
    const config = yield* IssuingConfig
    const keyCache = makeKeyCache()
    // Programs are never updated or deleted, so a found program can be remembered for good.
    const programCache = new Map<string, Program>()

    const newKey = (organizationId: string, input: CreateApiKeyInput, createdAt: string) =>
      Effect.gen(function*() {
        const secret = newApiKeySecret(config.environment)
        const key: ApiKey = {
          id: newId(),
          object: "api_key",
          organization_id: organizationId,
          name: input.name,
          role: input.role,
          program_ids: input.program_ids ?? null,
          pan_reveal: input.pan_reveal ?? false,
          created_at: createdAt,
          revoked_at: null
        }
        yield* store.insertApiKey(key, hashSecret(secret))
        return { ...key, secret } satisfies ApiKeyWithSecret
      })

    const createOrganizationWith = (name: string, secret: string | undefined) =>
      transactor.withTransaction(Effect.gen(function*() {
        const now = yield* nowIso
        const organizationId = newId()
        yield* store.insertOrganization({ id: organizationId, name, created_at: now })
        const program: Program = {
          id: newId(),
          object: "program",
          organization_id: organizationId,
          name: "Default program",
          bin: DEFAULT_BIN,
          created_at: now,
          updated_at: now
        }
        yield* store.insertProgram(program)
        const key: ApiKey = {
          id: newId(),
          object: "api_key",
          organization_id: organizationId,
          name: "Admin key",
          role: "admin",
          program_ids: null,
          pan_reveal: true,
          created_at: now,
          revoked_at: null
        }
        const apiKey = secret ?? newApiKeySecret(config.environment)
        yield* store.insertApiKey(key, hashSecret(apiKey))
        return { organization_id: organizationId, program_id: program.id, api_key: apiKey } satisfies NewOrganization
      }))

    return {
      /** Resolves `Authorization: Bearer <secret>` to the caller; 401 when missing, malformed, unknown or revoked. */
      authenticate: (authorization: string | undefined): Effect.Effect<Caller, AuthenticationFailed | SqlError.SqlError> =>
        Effect.gen(function*() {
          if (authorization === undefined || authorization.trim() === "") {
            return yield* new AuthenticationFailed({
              message: "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'."
            })
          }
          const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim())
          if (match === null || !looksLikeSecret(match[1]!)) {
            return yield* new AuthenticationFailed({
              message: "Malformed Authorization header. Send 'Authorization: Bearer <API_KEY>'."
            })
          }
          const secretHash = hashSecret(match[1]!)
          const now = yield* nowMs
          const cached = keyCache.get(secretHash, now)
          if (cached !== undefined) return cached
          const generation = keyCache.generation
          const key = yield* store.findActiveKeyByHash(secretHash)
          if (Option.isNone(key)) {
            return yield* new AuthenticationFailed({ message: "Invalid API key." })
          }
          const caller: Caller = {
            apiKeyId: key.value.id,
            organizationId: key.value.organization_id,
            role: key.value.role,
            programIds: key.value.program_ids,
            panReveal: key.value.pan_reveal
          }
          keyCache.set(secretHash, caller, now, generation)
          return caller
        }),

      /** Checks X-Program-ID: 400 when missing or malformed, 403 when the key cannot use that program. */
      resolveProgram: (
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
            new PermissionDenied({
              message: "This API key cannot access the program named by X-Program-ID.",
              param: "X-Program-ID"
            })
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
        }),

      createProgram: (caller: Caller, input: CreateProgramInput) =>
        Effect.gen(function*() {
          yield* requireAdmin(caller)
          const now = yield* nowIso
          const program: Program = {
            id: newId(),
            object: "program",
            organization_id: caller.organizationId,
            name: input.name,
            bin: input.bin ?? DEFAULT_BIN,
            created_at: now,
            updated_at: now
          }
          yield* store.insertProgram(program)
          return program
        }),

      listPrograms: (caller: Caller, page: PageRequest): Effect.Effect<Page<Program>, SqlError.SqlError> =>
        store.listPrograms(caller.organizationId, caller.programIds, toWindow(page)).pipe(
          Effect.map(({ rows, total }) => ({ data: rows, total_count: total }))
        ),

      getProgram: (caller: Caller, programId: string) =>
        Effect.gen(function*() {
          const missing = new NotFound({ message: "No such program.", param: "program_id" })
          if (!isUuid(programId) || !canSeeProgram(caller, programId.toLowerCase())) return yield* missing
          const program = yield* store.findProgram(caller.organizationId, programId.toLowerCase())
          return yield* Option.match(program, { onNone: () => Effect.fail(missing), onSome: Effect.succeed })
        }),

      createApiKey: (caller: Caller, input: CreateApiKeyInput) =>
        Effect.gen(function*() {
          yield* requireAdmin(caller)
          // A key can only hand out what it has: its programs and its PAN reveal right.
          if (input.pan_reveal === true && !caller.panReveal) {
            return yield* new PermissionDenied({
              message: "This API key cannot create a key with pan_reveal: it is not enabled for PAN reveal itself.",
              param: "pan_reveal"
            })
          }
          const programIds = input.program_ids ?? null
          if (programIds === null && caller.programIds !== null) {
            return yield* new PermissionDenied({
              message: "This API key is limited to some programs; the new key's program_ids must name some of them.",
              param: "program_ids"
            })
          }
          if (programIds !== null) {
            if (programIds.length === 0) {
              return yield* new InvalidRequest({
                message: "program_ids must name at least one program (or be null for every program).",
                param: "program_ids"
              })
            }
            if (programIds.length > MAX_PROGRAM_IDS) {
              return yield* new InvalidRequest({ message: `At most ${MAX_PROGRAM_IDS} program ids.`, param: "program_ids" })
            }
            const unique = [...new Set(programIds.map((id) => id.toLowerCase()))]
            if (unique.some((id) => !isUuid(id))) {
              return yield* new InvalidRequest({ message: "program_ids must hold program UUIDs.", param: "program_ids" })
            }
            if (caller.programIds !== null && unique.some((id) => !caller.programIds!.includes(id))) {
              return yield* new PermissionDenied({
                message: "program_ids names a program this API key cannot access.",
                param: "program_ids"
              })
            }
            const known = yield* store.countPrograms(caller.organizationId, unique)
            if (known !== unique.length) {
              return yield* new InvalidRequest({
                message: "program_ids names a program that does not exist in this organization.",
                param: "program_ids"
              })
            }
            return yield* newKey(caller.organizationId, { ...input, program_ids: unique }, yield* nowIso)
          }
          return yield* newKey(caller.organizationId, input, yield* nowIso)
        }),

      listApiKeys: (caller: Caller, page: PageRequest) =>
        Effect.gen(function*() {
          yield* requireAdmin(caller)
          const { rows, total } = yield* store.listApiKeys(caller.organizationId, toWindow(page))
          return { data: rows, total_count: total } satisfies Page<ApiKey>
        }),

      revokeApiKey: (caller: Caller, keyId: string) =>
        Effect.gen(function*() {
          yield* requireAdmin(caller)
          const missing = new NotFound({ message: "No such API key.", param: "api_key_id" })
          if (!isUuid(keyId)) return yield* missing
          const revoked = yield* store.revokeApiKey(caller.organizationId, keyId.toLowerCase(), yield* nowIso)
          // The key stops working in this process at once; other processes within API_KEY_CACHE_TTL_MS.
          if (Option.isSome(revoked)) keyCache.forget(revoked.value.id)
          return yield* Option.match(revoked, { onNone: () => Effect.fail(missing), onSome: Effect.succeed })
        }),

      /** A new organization with a default program and an admin key (PAN reveal enabled). */
      createOrganization: (name: string) => createOrganizationWith(name, undefined),

      /**
       * On a database without any API key, creates the first organization; its admin key's secret is
       * `secret` when given. Returns none when keys already exist.
       */
      bootstrap: (secret: string | undefined) =>
        transactor.withTransaction(Effect.gen(function*() {
          if ((yield* store.countApiKeys) > 0) return Option.none<NewOrganization>()
          return Option.some(yield* createOrganizationWith("Default organization", secret))
        }))
    }
  })
}) {}
