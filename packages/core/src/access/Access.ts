import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { InvalidRequest, type NotFound, PermissionDenied } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { IssuingConfig, type IssuingSettings } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { API_KEY_ORDER_FIELDS, type ApiKeyOrderField, PROGRAM_ORDER_FIELDS, type ProgramOrderField } from "./OrderFields.js"
import { nowIso } from "../platform/Time.js"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { AccessStore, type AccessStoreService } from "./AccessStore.js"
import { canSeeProgram, makeAuthentication } from "./Authentication.js"
import { DelegatedAccess } from "./DelegatedAccess.js"
import {
  type ApiKey,
  type ApiKeyWithSecret,
  type Caller,
  type CreateApiKey,
  type CreateProgram,
  type UpdateProgram,
  KEY_RIGHTS,
  type KeyRight,
  type KeyScope,
  type Program,
  type StoredApiKey,
  type StoredProgram
} from "./Records.js"
import { hashSecret, looksLikeSecret, MIN_CHOSEN_SECRET_LENGTH, newApiKeySecret } from "./Secrets.js"

export { API_KEY_CACHE_MAX_AGE_MS } from "./Authentication.js"

/** Default BIN of a new program. */
export const DEFAULT_BIN = "400000"

/** What `createOrganization` returns: the CLI prints it as one JSON object. */
export interface NewOrganization {
  readonly organization_id: string
  readonly program_id: string
  readonly api_key: string
}

/** What the access operations work with, gathered once when the service is built. */
interface AccessDeps {
  readonly store: AccessStoreService
  readonly transactor: TransactorService
  readonly config: IssuingSettings
}

const PROGRAM = { resource: "program", param: "program_id" } as const
const API_KEY = { resource: "API key", param: "api_key_id" } as const

const requireAdmin = (caller: Caller): Effect.Effect<void, PermissionDenied> =>
  caller.role === "admin"
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: "This operation requires an admin API key.", param: null }))

/** Programs are the organization's: a key limited to some programs may not add one. */
const requireUnlimitedAdmin = (caller: Caller): Effect.Effect<void, PermissionDenied> =>
  caller.role === "admin" && caller.programIds === null
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: "This operation requires an admin API key not limited by program_ids.", param: null }))

/** The caller's rights by name; a right added to KEY_RIGHTS must be mapped here. */
const callerRights = (caller: Caller): Record<KeyRight, boolean> => ({
  pan_reveal: caller.panReveal,
  card_display: caller.cardDisplay,
  inbound_funding: caller.inboundFunding,
  network: caller.network
})

/** The keys an admin may list and revoke: within its programs, holding only rights it holds. */
const keyScope = (caller: Caller): KeyScope => ({
  programIds: caller.programIds,
  withoutRights: KEY_RIGHTS.filter((right) => !callerRights(caller)[right])
})

/** The same rule on one key (the store applies it to lists, keyScope). */
export const inKeyScope = (scope: KeyScope, key: ApiKey): boolean =>
  scope.withoutRights.every((right) => !key[right]) &&
  (scope.programIds === null || (key.program_ids?.every((id) => scope.programIds!.includes(id)) ?? false))

/** A new program record of the organization (not stored). */
const newProgram = (organizationId: string, name: string, bin: string, now: string): StoredProgram => ({
  id: newId(),
  object: "program",
  organization_id: organizationId,
  name,
  bin,
  require_verified_cardholder: false,
  created_at: now,
  updated_at: now
})

/** Stores a new key (its secret only as a hash) and returns it with the secret, shown this once. */
const storeNewKey = (
  { config, store }: AccessDeps,
  fields: Omit<StoredApiKey, "id" | "object" | "revoked_at">,
  secret = newApiKeySecret(config.environment)
) =>
  Effect.gen(function* () {
    const key: StoredApiKey = { id: newId(), object: "api_key", ...fields, revoked_at: null }
    yield* store.insertApiKey(key, hashSecret(secret))
    return { ...key, secret }
  })

/**
 * A new organization with a default program and an admin key (PAN reveal, inbound funding and the
 * network right enabled) whose secret is `secret` when given.
 */
const createOrganizationWith = (deps: AccessDeps, name: string, secret: string | undefined) =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const now = yield* nowIso
      const organizationId = newId()
      yield* deps.store.insertOrganization({ id: organizationId, name, created_at: now })
      const program = newProgram(organizationId, "Default program", DEFAULT_BIN, now)
      yield* deps.store.insertProgram(program)
      const key = yield* storeNewKey(
        deps,
        {
          organization_id: organizationId,
          name: "Admin key",
          role: "admin",
          program_ids: null,
          pan_reveal: true,
          card_display: true,
          inbound_funding: true,
          network: true,
          created_at: now
        },
        secret
      )
      return { organization_id: organizationId, program_id: program.id, api_key: key.secret } satisfies NewOrganization
    })
  )

/**
 * A key can only hand out what it has: its programs and its PAN reveal, card display, inbound
 * funding and network rights (403 naming the field otherwise). `programIds` null means every program.
 */
const checkGrant = (
  caller: Caller,
  programIds: ReadonlyArray<string> | null,
  panReveal: boolean,
  cardDisplay: boolean,
  inboundFunding: boolean,
  network: boolean
) => {
  if (network && !caller.network) {
    return Effect.fail(
      new PermissionDenied({
        message: "This API key cannot create a key with network: it does not hold the network right itself.",
        param: "network"
      })
    )
  }
  if (inboundFunding && !caller.inboundFunding) {
    return Effect.fail(
      new PermissionDenied({
        message: "This API key cannot create a key with inbound_funding: it does not hold inbound_funding itself.",
        param: "inbound_funding"
      })
    )
  }
  if (panReveal && !caller.panReveal) {
    return Effect.fail(
      new PermissionDenied({
        message: "This API key cannot create a key with pan_reveal: it is not enabled for PAN reveal itself.",
        param: "pan_reveal"
      })
    )
  }
  if (cardDisplay && !caller.cardDisplay) {
    return Effect.fail(
      new PermissionDenied({
        message: "This API key cannot create a key with card_display: it is not enabled for card display itself.",
        param: "card_display"
      })
    )
  }
  if (caller.programIds !== null && programIds === null) {
    return Effect.fail(
      new PermissionDenied({
        message: "This API key is limited to some programs; the new key's program_ids must name some of them.",
        param: "program_ids"
      })
    )
  }
  if (caller.programIds && programIds?.some((id) => !canSeeProgram(caller, id))) {
    return Effect.fail(
      new PermissionDenied({
        message: "program_ids names a program this API key cannot access.",
        param: "program_ids"
      })
    )
  }
  return Effect.void
}

/** POST /v1/api-keys (admin): a key of the caller's organization, limited to programs it names, if any. */
const createApiKey = (
  deps: AccessDeps,
  caller: Caller,
  input: CreateApiKey
): Effect.Effect<ApiKeyWithSecret, InvalidRequest | PermissionDenied | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireAdmin(caller)
    const programIds = input.program_ids ?? null
    const panReveal = input.pan_reveal ?? false
    // Viewers only read (an embed session is a POST); others display cards unless the creator cannot.
    const cardDisplay = input.card_display ?? (input.role !== "viewer" && caller.cardDisplay)
    const inboundFunding = input.inbound_funding ?? false
    const network = input.network ?? false
    yield* checkGrant(caller, programIds, panReveal, cardDisplay, inboundFunding, network)
    if (programIds !== null && (yield* deps.store.countPrograms(caller.organizationId, programIds)) !== programIds.length) {
      return yield* new InvalidRequest({
        message: "program_ids names a program that does not exist in this organization.",
        param: "program_ids"
      })
    }
    return yield* storeNewKey(deps, {
      organization_id: caller.organizationId,
      name: input.name,
      role: input.role,
      program_ids: programIds,
      pan_reveal: panReveal,
      card_display: cardDisplay,
      inbound_funding: inboundFunding,
      network,
      created_at: yield* nowIso
    })
  })

/** Organizations, programs, API keys, authentication and program scoping. Inputs arrive decoded (access/Records.ts). */
export class Access extends Effect.Service<Access>()("@issuing/core/Access", {
  effect: Effect.gen(function* () {
    const deps: AccessDeps = { store: yield* AccessStore, transactor: yield* Transactor, config: yield* IssuingConfig }
    const { store } = deps
    const feed = yield* ChangeFeed
    const delegated = yield* DelegatedAccess
    const { authenticate, forgetGrants, forgetKey, resolveProgram } = makeAuthentication(store, feed, delegated.resolveAccessToken)

    return {
      authenticate,
      resolveProgram,
      forgetGrants,

      /** POST /v1/programs (admin not limited by program_ids). */
      createProgram: (caller: Caller, input: CreateProgram): Effect.Effect<Program, PermissionDenied | SqlError.SqlError> =>
        Effect.gen(function* () {
          yield* requireUnlimitedAdmin(caller)
          const program = newProgram(caller.organizationId, input.name, input.bin ?? DEFAULT_BIN, yield* nowIso)
          yield* store.insertProgram(program)
          return program
        }),

      /** GET /v1/programs: the organization's programs the key may use. */
      listPrograms: (
        caller: Caller,
        page: PageRequest<ProgramOrderField>
      ): Effect.Effect<Page<Program>, InvalidRequest | SqlError.SqlError> =>
        Effect.suspend(() => {
          const window = toWindow(page, PROGRAM_ORDER_FIELDS)
          return store
            .listPrograms(caller.organizationId, caller.programIds, window)
            .pipe(Effect.map(({ rows, total }) => pageOf(window, rows, total)))
        }),

      /** GET /v1/programs/{program_id}: programs the key may not use are not found. */
      getProgram: (caller: Caller, programId: string): Effect.Effect<Program, NotFound | SqlError.SqlError> =>
        findOwned(programId, PROGRAM, (id) =>
          canSeeProgram(caller, id) ? store.findProgram(caller.organizationId, id) : Effect.succeed(Option.none())
        ),

      /**
       * PATCH /v1/programs/{program_id} (admin): the program's settings. `require_verified_cardholder`
       * is read from the database by every card issuance (never from a node's program cache), so it
       * holds on every node from the commit.
       */
      updateProgram: (
        caller: Caller,
        programId: string,
        change: UpdateProgram
      ): Effect.Effect<Program, PermissionDenied | NotFound | SqlError.SqlError> =>
        Effect.gen(function* () {
          yield* requireAdmin(caller)
          const current = yield* findOwned(programId, PROGRAM, (id) =>
            canSeeProgram(caller, id) ? store.findProgram(caller.organizationId, id) : Effect.succeed(Option.none())
          )
          const required = change.require_verified_cardholder ?? current.require_verified_cardholder
          if (required === current.require_verified_cardholder) return current
          const updated = yield* store.updateProgram(
            caller.organizationId,
            current.id,
            { require_verified_cardholder: required },
            yield* nowIso
          )
          return Option.getOrElse(updated, () => current)
        }),

      createApiKey: createApiKey.bind(null, deps),

      /** GET /v1/api-keys (admin): the organization's unrevoked keys within the caller's key scope. */
      listApiKeys: (
        caller: Caller,
        page: PageRequest<ApiKeyOrderField>
      ): Effect.Effect<Page<ApiKey>, InvalidRequest | PermissionDenied | SqlError.SqlError> =>
        Effect.gen(function* () {
          yield* requireAdmin(caller)
          const window = toWindow(page, API_KEY_ORDER_FIELDS)
          const { rows, total } = yield* store.listApiKeys(caller.organizationId, window, keyScope(caller))
          return pageOf(window, rows, total)
        }),

      /**
       * DELETE /v1/api-keys/{api_key_id} (admin): the key, and every OAuth grant it consented to
       * (docs/oauth.md#incident-response), stop working on every node from the commit (the changes
       * are published in its transaction); unknown, revoked and out-of-scope keys are not found
       * (so a limited admin cannot probe the others).
       */
      revokeApiKey: (caller: Caller, keyId: string): Effect.Effect<ApiKey, PermissionDenied | NotFound | SqlError.SqlError> =>
        deps.transactor.withTransaction(
          Effect.gen(function* () {
            yield* requireAdmin(caller)
            const scope = keyScope(caller)
            const at = yield* nowIso
            const revoked = yield* findOwned(keyId, API_KEY, (id) =>
              Effect.flatMap(store.findApiKey(caller.organizationId, id), (found) =>
                Option.isSome(found) && inKeyScope(scope, found.value)
                  ? store.revokeApiKey(caller.organizationId, id, at)
                  : Effect.succeed(Option.none())
              )
            )
            yield* feed.publish("api_key", revoked.id)
            yield* delegated.revokeGrantsOfKey(revoked.id, at, forgetGrants)
            forgetKey(revoked.id)
            return revoked
          })
        ),

      /** A new organization with a default program and an admin key (PAN reveal enabled). */
      createOrganization: (name: string) => createOrganizationWith(deps, name, undefined),

      /**
       * On a database without any API key, creates the first organization; its admin key's secret is
       * `secret` when given. Returns none when keys already exist.
       */
      bootstrap: (secret: string | undefined) =>
        secret !== undefined && (secret.length < MIN_CHOSEN_SECRET_LENGTH || !looksLikeSecret(secret))
          ? Effect.dieMessage(`A chosen admin key secret must be ${MIN_CHOSEN_SECRET_LENGTH} to 256 printable characters.`)
          : deps.transactor.withTransaction(
              Effect.gen(function* () {
                if ((yield* store.countApiKeys) > 0) return Option.none<NewOrganization>()
                return Option.some(yield* createOrganizationWith(deps, "Default organization", secret))
              })
            )
    }
  })
}) {}
