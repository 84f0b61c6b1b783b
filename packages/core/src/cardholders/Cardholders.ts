import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { Events } from "../events/Events.js"
import { BusinessRuleViolation, InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { applyMetadataChange, initialMetadata } from "../platform/Metadata.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { CardholderStore, type CardholderStoreService } from "./CardholderStore.js"
import { CARDHOLDER_ORDER_FIELDS, type CardholderOrderField } from "./OrderFields.js"
import type {
  BillingAddress,
  Cardholder,
  CardholderFilter,
  CardholderType,
  CreateCardholder,
  IndividualDetails,
  RecordVerification,
  UpdateCardholder
} from "./Records.js"

/** How a cardholder id that finds nothing is reported: on its own path, or named in a body. */
const CARDHOLDER = { resource: "cardholder", param: "cardholder_id" } as const

/** The address as stored: optional lines null when not sent. */
const addressOf = (input: CreateCardholder["billing_address"]): BillingAddress => ({
  line1: input.line1,
  line2: input.line2 ?? null,
  city: input.city,
  state: input.state ?? null,
  postal_code: input.postal_code,
  country: input.country
})

/** Only an individual has an individual's details (a business's people are not recorded here). */
const checkIndividual = (type: CardholderType, individual: IndividualDetails | null | undefined) =>
  type === "business" && individual !== null && individual !== undefined
    ? Effect.fail(new InvalidRequest({ message: "individual may only be given for a cardholder of type individual.", param: "individual" }))
    : Effect.void

/** Equal as JSON, for the "nothing changed" test of a PATCH. */
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The cardholder a new card is for (its own `cardholder_id`, else its wallet's), locked until the
 * issuance commits so that a verification cannot change it in between, and checked against the
 * program's `require_verified_cardholder` (read from the database, so a change holds on every node):
 * 404 `cardholder_id` when it is not the program's; 422 `cardholder_not_verified` when the program
 * requires a VERIFIED cardholder and the card has none or one that is not.
 */
export const cardholderForCard = (
  store: CardholderStoreService,
  programId: string,
  cardholderId: string | null
): Effect.Effect<Cardholder | null, NotFound | BusinessRuleViolation | SqlError.SqlError> =>
  Effect.gen(function* () {
    const cardholder = cardholderId === null ? null : yield* findOwned(cardholderId, CARDHOLDER, (id) => store.find(programId, id, true))
    if (cardholder?.status === "VERIFIED") return cardholder
    if (yield* store.requiresVerifiedCardholder(programId)) {
      return yield* new BusinessRuleViolation({
        code: "cardholder_not_verified",
        message:
          cardholder === null
            ? "This program issues cards only to VERIFIED cardholders: give the card (or its wallet) a cardholder_id."
            : `This program issues cards only to VERIFIED cardholders; this one is ${cardholder.status}.`,
        param: "cardholder_id"
      })
    }
    return cardholder
  })

/** The program's cardholder named in a request body (a wallet's), 404 naming cardholder_id otherwise. */
export const findCardholder = (store: CardholderStoreService, programId: string, cardholderId: string) =>
  findOwned(cardholderId, CARDHOLDER, (id) => store.find(programId, id))

/**
 * Cardholders (docs/cardholders.md): created, read, changed and verified within a program, each
 * change with its `cardholder.created` / `cardholder.updated` event in the same transaction.
 * Inputs arrive decoded (cardholders/Records.ts).
 */
export class Cardholders extends Effect.Service<Cardholders>()("@issuing/core/Cardholders", {
  effect: Effect.gen(function* () {
    const store = yield* CardholderStore
    const transactor = yield* Transactor
    const events = yield* Events

    /** Writes a changed cardholder and its event, unless nothing changed. */
    const save = (programId: string, current: Cardholder, next: Cardholder) =>
      Effect.gen(function* () {
        const { updated_at: _a, verification: va, ...a } = current
        const { updated_at: _b, verification: vb, ...b } = next
        if (sameJson(a, b) && va.status === vb.status && va.reference === vb.reference) return current
        const at = yield* nowIso
        const saved: Cardholder = {
          ...next,
          verification: va.status === vb.status && va.reference === vb.reference ? va : { ...vb, updated_at: at },
          updated_at: at
        }
        yield* store.update(saved)
        yield* events.emit(programId, "cardholder.updated", saved)
        return saved
      })

    return {
      /** POST /v1/cardholders: PENDING_VERIFICATION until the program records its check; emits cardholder.created. */
      create: (programId: string, input: CreateCardholder): Effect.Effect<Cardholder, InvalidRequest | SqlError.SqlError> =>
        Effect.gen(function* () {
          yield* checkIndividual(input.type, input.individual)
          const now = yield* nowIso
          const cardholder: Cardholder = {
            id: newId(),
            object: "cardholder",
            program_id: programId,
            type: input.type,
            name: input.name,
            email: input.email ?? null,
            phone_number: input.phone_number ?? null,
            billing_address: addressOf(input.billing_address),
            individual: input.individual ?? null,
            metadata: initialMetadata(input.metadata),
            status: "PENDING_VERIFICATION",
            verification: { status: "PENDING_VERIFICATION", reference: null, updated_at: now },
            created_at: now,
            updated_at: now
          }
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              yield* store.insert(cardholder)
              yield* events.emit(programId, "cardholder.created", cardholder)
              return cardholder
            })
          )
        }),

      /** GET /v1/cardholders/{cardholder_id}. */
      get: (programId: string, cardholderId: string): Effect.Effect<Cardholder, NotFound | SqlError.SqlError> =>
        findCardholder(store, programId, cardholderId),

      /** GET /v1/cardholders: newest first by default, filtered by status and email, with the exact total. */
      list: (
        programId: string,
        filter: CardholderFilter,
        page: PageRequest<CardholderOrderField>
      ): Effect.Effect<Page<Cardholder>, InvalidRequest | SqlError.SqlError> => {
        const window = toWindow(page, CARDHOLDER_ORDER_FIELDS)
        return Effect.map(store.list(programId, filter, window), ({ rows, total }) => pageOf(window, rows, total))
      },

      /**
       * PATCH /v1/cardholders/{cardholder_id}: a field sent replaces the cardholder's (null clears an
       * optional one), metadata is merged (docs/api.md#metadata); decided under the row lock. The
       * verification is kept: a program that re-checks after a change records it again. A change that
       * changes nothing answers the cardholder and emits nothing.
       */
      update: (
        programId: string,
        cardholderId: string,
        change: UpdateCardholder
      ): Effect.Effect<Cardholder, NotFound | InvalidRequest | SqlError.SqlError> =>
        transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* findOwned(cardholderId, CARDHOLDER, (id) => store.find(programId, id, true))
            yield* checkIndividual(current.type, change.individual)
            const next: Cardholder = {
              ...current,
              name: change.name ?? current.name,
              email: change.email === undefined ? current.email : change.email,
              phone_number: change.phone_number === undefined ? current.phone_number : change.phone_number,
              billing_address: change.billing_address === undefined ? current.billing_address : addressOf(change.billing_address),
              individual: change.individual === undefined ? current.individual : change.individual,
              metadata: change.metadata === undefined ? current.metadata : yield* applyMetadataChange(current.metadata, change.metadata)
            }
            return yield* save(programId, current, next)
          })
        ),

      /**
       * POST /v1/cardholders/{cardholder_id}/verification: the outcome of the program's own check
       * (VERIFIED or REJECTED, with its reference), which may be recorded again as checks are
       * redone; `cardholder.updated` when it changes the status or the reference.
       */
      recordVerification: (
        programId: string,
        cardholderId: string,
        input: RecordVerification
      ): Effect.Effect<Cardholder, NotFound | SqlError.SqlError> =>
        transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* findOwned(cardholderId, CARDHOLDER, (id) => store.find(programId, id, true))
            const reference = input.reference === undefined ? current.verification.reference : input.reference
            return yield* save(programId, current, {
              ...current,
              status: input.status,
              verification: { status: input.status, reference, updated_at: current.verification.updated_at }
            })
          })
        )
    }
  })
}) {}
