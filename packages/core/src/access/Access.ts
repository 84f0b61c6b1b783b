import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { AuthenticationFailed, InvalidRequest, NotFound, PermissionDenied } from "../platform/Errors.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
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
          const key = yield* store.findActiveKeyByHash(hashSecret(match[1]!))
          if (Option.isNone(key)) {
            return yield* new AuthenticationFailed({ message: "Invalid API key." })
          }
          return {
            apiKeyId: key.value.id,
            organizationId: key.value.organization_id,
            role: key.value.role,
            programIds: key.value.program_ids,
            panReveal: key.value.pan_reveal
          }
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
          const denied = new PermissionDenied({
            message: "This API key cannot access the program named by X-Program-ID.",
            param: "X-Program-ID"
          })
          if (!canSeeProgram(caller, programId.toLowerCase())) return yield* denied
          const program = yield* store.findProgram(caller.organizationId, programId.toLowerCase())
          if (Option.isNone(program)) return yield* denied
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
          const programIds = input.program_ids ?? null
          if (programIds !== null) {
            if (programIds.length > MAX_PROGRAM_IDS) {
              return yield* new InvalidRequest({ message: `At most ${MAX_PROGRAM_IDS} program ids.`, param: "program_ids" })
            }
            const unique = [...new Set(programIds.map((id) => id.toLowerCase()))]
            if (unique.some((id) => !isUuid(id))) {
              return yield* new InvalidRequest({ message: "program_ids must hold program UUIDs.", param: "program_ids" })
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
