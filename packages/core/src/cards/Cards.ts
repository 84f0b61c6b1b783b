import type { SqlError } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import * as crypto from "node:crypto"
import type { ProgramCaller } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import {
  AuthenticationFailed,
  BusinessRuleViolation,
  Conflict,
  InvalidRequest,
  NotFound,
  PermissionDenied
} from "../platform/Errors.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso, nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { expiryFrom, generateCvv, generatePan, normalizePan, replacementExpiry } from "./CardNumbers.js"
import { type CardSecrets, CardStore } from "./CardStore.js"
import {
  CARD_AUDIT_ACTIONS,
  CARD_STATES,
  type Card,
  type CardAccessContext,
  type CardAuditAction,
  type CardAuditRecord,
  type CardDisplay,
  type CardEmbedSession,
  type CardRecord,
  type CardReveal,
  type CardState,
  type CardType
} from "./Records.js"
import { parseSpendControls, type SpendControlsInput } from "./SpendControls.js"

/** Attempts at drawing an unused number before issuance gives up (the BIN's number space is nearly full). */
export const MAX_NUMBER_ATTEMPTS = 16
/** Bytes of randomness in an embed session token (256 bits). */
export const EMBED_TOKEN_BYTES = 32
/** Cards re-sealed per batch when rotating the vault key. */
export const RESEAL_BATCH_SIZE = 200

/** The issuance request of POST /v1/cards. */
export interface IssueCardInput extends SpendControlsInput {
  readonly wallet_id: string
  readonly type: CardType
}

/** Filters of GET /v1/cards. */
export interface CardListFilter {
  readonly wallet_id?: string | undefined
  readonly state?: string | undefined
}

/** Filters of GET /v1/card-audit-records. */
export interface CardAuditListFilter {
  readonly card_id?: string | undefined
  readonly action?: string | undefined
}

/** Lifecycle actions of POST /v1/cards/{card_id}/<action>. */
export type CardLifecycleAction = "freeze" | "unfreeze" | "close" | "reissue"

/** From which states each lifecycle action is allowed, and where it leads (null: the state is kept). */
export const LIFECYCLE: Record<CardLifecycleAction, { readonly from: ReadonlyArray<CardState>; readonly to: CardState | null }> = {
  freeze: { from: ["ACTIVE"], to: "FROZEN" },
  unfreeze: { from: ["FROZEN"], to: "ACTIVE" },
  close: { from: ["ACTIVE", "FROZEN"], to: "CLOSED" },
  reissue: { from: ["ACTIVE", "FROZEN"], to: null }
}

const cardNotFound = () => new NotFound({ message: "No such card.", param: "card_id" })
const invalidSession = () =>
  new AuthenticationFailed({ message: "The embed session_token is unknown or expired. Create a new embed session." })

/** True when text could be a token we issued (base64url of 32 bytes), so junk is never looked up. */
const looksLikeToken = (text: string) => /^[A-Za-z0-9_-]{43}$/.test(text)

type CardsError = InvalidRequest | NotFound | Conflict | PermissionDenied | BusinessRuleViolation | SqlError.SqlError

/**
 * Cards: issuance with spend controls, the vault (number and code sealed at rest, searchable by
 * keyed fingerprint), lifecycle, reveal, search-by-pan, embed sessions and the audit trail of every
 * access to card data.
 */
export class Cards extends Effect.Service<Cards>()("@issuing/core/Cards", {
  effect: Effect.gen(function*() {
    const store = yield* CardStore
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const vault = yield* Vault
    const events = yield* Events
    const config = yield* IssuingConfig

    /** Draws a new unused number and code under the program's BIN and seals them. */
    /** Fresh number, code and expiry; a replacement's expiry is always later than `replacing`'s. */
    const newSecrets = (
      bin: string,
      replacing?: { readonly exp_month: number; readonly exp_year: number }
    ): Effect.Effect<CardSecrets, BusinessRuleViolation | SqlError.SqlError> =>
      Effect.gen(function*() {
        const now = yield* nowMs
        const expiry = replacing === undefined ? expiryFrom(now) : replacementExpiry(now, replacing)
        for (let attempt = 0; attempt < MAX_NUMBER_ATTEMPTS; attempt++) {
          const pan = generatePan(bin)
          // Numbers are unique across programs and across vault keys: check every key's fingerprint.
          if (yield* store.fingerprintTaken(vault.fingerprints(pan))) continue
          return {
            sealed: {
              pan_sealed: vault.encrypt(pan),
              cvv_sealed: vault.encrypt(generateCvv()),
              pan_fingerprint: vault.fingerprint(pan),
              vault_key_id: vault.currentKeyId
            },
            last_four: pan.slice(-4),
            ...expiry
          }
        }
        return yield* new BusinessRuleViolation({
          code: "card_number_space_exhausted",
          message: "No unused card number could be drawn under this program's BIN. Use a program with another BIN.",
          param: null
        })
      })

    const findCard = (programId: string, cardId: string) =>
      Effect.gen(function*() {
        if (!isUuid(cardId)) return yield* cardNotFound()
        const found = yield* store.findCard(programId, cardId.toLowerCase())
        return yield* Option.match(found, { onNone: () => Effect.fail(cardNotFound()), onSome: Effect.succeed })
      })

    const audit = (
      programId: string,
      apiKeyId: string | null,
      cardId: string | null,
      action: CardAuditAction,
      requestId: string
    ) =>
      Effect.gen(function*() {
        const record: CardAuditRecord = {
          id: newId(),
          object: "card_audit_record",
          program_id: programId,
          api_key_id: apiKeyId,
          card_id: cardId,
          action,
          request_id: requestId,
          created_at: yield* nowIso
        }
        yield* store.insertAudit(record)
      })

    const display = (record: CardRecord) => ({
      pan: vault.decrypt(record.sealed.pan_sealed),
      cvv: vault.decrypt(record.sealed.cvv_sealed)
    })

    const issue = (caller: ProgramCaller, input: IssueCardInput): Effect.Effect<Card, CardsError> =>
      Effect.gen(function*() {
        const controls = yield* Either.match(parseSpendControls(input), {
          onLeft: (error) => Effect.fail(error),
          onRight: Effect.succeed
        })
        const programId = caller.program.id
        return yield* transactor.withTransaction(Effect.gen(function*() {
          const { wallet } = yield* ledger.walletAccount(programId, input.wallet_id)
          const secrets = yield* newSecrets(caller.program.bin)
          const now = yield* nowIso
          const card: Card = {
            id: newId(),
            object: "card",
            program_id: programId,
            wallet_id: wallet.id,
            financial_account_id: wallet.financial_account_id,
            type: input.type,
            state: "ACTIVE",
            last_four: secrets.last_four,
            exp_month: secrets.exp_month,
            exp_year: secrets.exp_year,
            ...controls,
            created_at: now,
            updated_at: now
          }
          yield* store.insertCard({ card, sealed: secrets.sealed })
          yield* events.emit(programId, "card.created", card)
          return card
        }))
      })

    const lifecycle = (caller: ProgramCaller, cardId: string, action: CardLifecycleAction) =>
      transactor.withTransaction(Effect.gen(function*() {
        const programId = caller.program.id
        const current = yield* findCard(programId, cardId)
        const rule = LIFECYCLE[action]
        const at = yield* nowIso
        const changed = action === "reissue"
          ? yield* store.replaceSecrets(programId, current.card.id, rule.from, yield* newSecrets(caller.program.bin, current.card), at)
          : yield* store.transition(programId, current.card.id, rule.from, rule.to!, at)
        if (Option.isNone(changed)) {
          const now = yield* store.findCard(programId, current.card.id)
          const state = Option.match(now, { onNone: () => current.card.state, onSome: (record) => record.card.state })
          return yield* new Conflict({
            message: `Cannot ${action} a card in state ${state}; ${action} is allowed from ${rule.from.join(" or ")}.`,
            param: null
          })
        }
        // Outstanding display sessions showed the old number (reissue) or a card that no longer works (close).
        if (action === "reissue" || action === "close") yield* store.deleteEmbedSessions(current.card.id)
        yield* events.emit(programId, "card.updated", changed.value.card)
        return changed.value.card
      }))

    return {
      /** POST /v1/cards: issues a card on a wallet of the program; emits card.created. */
      issue,

      /** GET /v1/cards/{card_id}. */
      get: (caller: ProgramCaller, cardId: string) =>
        Effect.map(findCard(caller.program.id, cardId), (record) => record.card),

      /** GET /v1/cards: the program's cards, filtered by wallet and state. */
      list: (caller: ProgramCaller, filter: CardListFilter, page: PageRequest): Effect.Effect<Page<Card>, InvalidRequest | SqlError.SqlError> =>
        Effect.gen(function*() {
          if (filter.wallet_id !== undefined && !isUuid(filter.wallet_id)) {
            return yield* new InvalidRequest({ message: "wallet_id must be a UUID.", param: "wallet_id" })
          }
          if (filter.state !== undefined && !CARD_STATES.includes(filter.state as CardState)) {
            return yield* new InvalidRequest({ message: `state must be one of ${CARD_STATES.join(", ")}.`, param: "state" })
          }
          const { rows, total } = yield* store.listCards(
            caller.program.id,
            { walletId: filter.wallet_id?.toLowerCase(), state: filter.state as CardState | undefined },
            toWindow(page)
          )
          return { data: rows.map((row) => row.card), total_count: total }
        }),

      /** Freeze, unfreeze, close or reissue; 409 from an incompatible state; emits card.updated. */
      lifecycle,

      /** POST /v1/cards/{card_id}/reveal: number and code for keys enabled for PAN reveal; audited. */
      reveal: (caller: ProgramCaller, cardId: string, context: CardAccessContext) =>
        transactor.withTransaction(Effect.gen(function*() {
          if (!caller.panReveal) {
            return yield* new PermissionDenied({ message: "This API key is not enabled for PAN reveal.", param: null })
          }
          const record = yield* findCard(caller.program.id, cardId)
          if (record.card.state === "CLOSED") {
            return yield* new Conflict({ message: "The card is CLOSED; its number can no longer be revealed.", param: null })
          }
          // The audit record commits before any plaintext leaves: no record, no reveal.
          yield* audit(caller.program.id, context.apiKeyId, record.card.id, "reveal", context.requestId)
          const { cvv, pan } = display(record)
          return {
            object: "card_reveal",
            card_id: record.card.id,
            pan,
            exp_month: record.card.exp_month,
            exp_year: record.card.exp_year,
            cvv
          } satisfies CardReveal
        })),

      /** POST /v1/cards/search-by-pan: the program's card with this number (by keyed fingerprint); audited. */
      searchByPan: (caller: ProgramCaller, panText: string, context: CardAccessContext) =>
        Effect.gen(function*() {
          const pan = normalizePan(panText)
          if (pan === undefined) {
            return yield* new InvalidRequest({ message: "pan must be a card number of 12 to 19 digits.", param: "pan" })
          }
          const found = yield* transactor.withTransaction(Effect.gen(function*() {
            const record = yield* store.findByFingerprints(caller.program.id, vault.fingerprints(pan))
            const cardId = Option.match(record, { onNone: () => null, onSome: (r) => r.card.id })
            yield* audit(caller.program.id, context.apiKeyId, cardId, "search_by_pan", context.requestId)
            return record
          }))
          return yield* Option.match(found, {
            onNone: () => Effect.fail(new NotFound({ message: "No card of this program has that number.", param: "pan" })),
            onSome: (record) => Effect.succeed(record.card)
          })
        }),

      /** POST /v1/cards/{card_id}/embed-sessions: a short-lived token for the embed document; audited. */
      createEmbedSession: (caller: ProgramCaller, cardId: string, context: CardAccessContext) =>
        transactor.withTransaction(Effect.gen(function*() {
          const record = yield* findCard(caller.program.id, cardId)
          if (record.card.state === "CLOSED") {
            return yield* new Conflict({ message: "The card is CLOSED; it cannot be displayed.", param: null })
          }
          const token = crypto.randomBytes(EMBED_TOKEN_BYTES).toString("base64url")
          const nowMillis = yield* nowMs
          const createdAt = new Date(nowMillis).toISOString()
          const expiresAt = new Date(nowMillis + config.embedSessionTtlSeconds * 1000).toISOString()
          yield* store.insertEmbedSession({
            id: newId(),
            program_id: caller.program.id,
            card_id: record.card.id,
            token_hash: hashSecret(token),
            api_key_id: context.apiKeyId,
            created_at: createdAt,
            expires_at: expiresAt
          })
          yield* audit(caller.program.id, context.apiKeyId, record.card.id, "embed_session", context.requestId)
          return {
            object: "card_embed_session",
            card_id: record.card.id,
            session_token: token,
            expires_at: expiresAt,
            embed_url: `${config.baseUrl}/v1/cards/embed?session_token=${token}`
          } satisfies CardEmbedSession
        })),

      /**
       * GET /v1/cards/embed: the card data behind a session token, for the embed document. Unknown,
       * expired, or tokens of a closed or reissued card fail authentication (401). Audited.
       */
      openEmbedSession: (
        token: string | undefined,
        requestId: string
      ): Effect.Effect<CardDisplay, AuthenticationFailed | SqlError.SqlError> =>
        Effect.gen(function*() {
          if (token === undefined || !looksLikeToken(token)) return yield* invalidSession()
          return yield* transactor.withTransaction(Effect.gen(function*() {
            const session = yield* store.findEmbedSession(hashSecret(token))
            if (Option.isNone(session)) return yield* invalidSession()
            const nowMillis = yield* nowMs
            if (Date.parse(session.value.expires_at) <= nowMillis) return yield* invalidSession()
            const record = yield* store.findCard(session.value.program_id, session.value.card_id)
            if (Option.isNone(record) || record.value.card.state === "CLOSED") return yield* invalidSession()
            yield* audit(session.value.program_id, session.value.api_key_id, record.value.card.id, "embed_view", requestId)
            const { cvv, pan } = display(record.value)
            return {
              card_id: record.value.card.id,
              pan,
              cvv,
              exp_month: record.value.card.exp_month,
              exp_year: record.value.card.exp_year
            } satisfies CardDisplay
          }))
        }),

      /** GET /v1/card-audit-records: who accessed card data, newest first. */
      listAudit: (caller: ProgramCaller, filter: CardAuditListFilter, page: PageRequest) =>
        Effect.gen(function*() {
          if (filter.card_id !== undefined && !isUuid(filter.card_id)) {
            return yield* new InvalidRequest({ message: "card_id must be a UUID.", param: "card_id" })
          }
          if (filter.action !== undefined && !CARD_AUDIT_ACTIONS.includes(filter.action as CardAuditAction)) {
            return yield* new InvalidRequest({
              message: `action must be one of ${CARD_AUDIT_ACTIONS.join(", ")}.`,
              param: "action"
            })
          }
          const { rows, total } = yield* store.listAudit(
            caller.program.id,
            { cardId: filter.card_id?.toLowerCase(), action: filter.action as CardAuditAction | undefined },
            toWindow(page)
          )
          return { data: rows, total_count: total } satisfies Page<CardAuditRecord>
        }),

      /** Deletes embed sessions that expired more than a day ago (a background task runs it). */
      purgeExpiredEmbedSessions: Effect.gen(function*() {
        const before = new Date((yield* nowMs) - 24 * 60 * 60 * 1000).toISOString()
        return yield* store.purgeEmbedSessions(before)
      }),

      /**
       * Re-seals every card made under an older vault key with the current key (after rotating
       * ISSUING_VAULT_KEY to `new,old`); returns how many cards were re-sealed. Safe to rerun.
       * The count is taken from each batch's committed result (a retried transaction counts once).
       */
      resealWithCurrentKey: Effect.gen(function*() {
        let total = 0
        for (;;) {
          const batch = yield* store.cardsSealedWithOtherKeys(vault.currentKeyId, RESEAL_BATCH_SIZE)
          if (batch.length === 0) return total
          const done = yield* transactor.withTransaction(Effect.forEach(batch, (record) =>
            Effect.suspend(() => {
              const pan = vault.decrypt(record.sealed.pan_sealed)
              const cvv = vault.decrypt(record.sealed.cvv_sealed)
              return store.reseal(record.card.id, record.sealed.vault_key_id, {
                pan_sealed: vault.encrypt(pan),
                cvv_sealed: vault.encrypt(cvv),
                pan_fingerprint: vault.fingerprint(pan),
                vault_key_id: vault.currentKeyId
              })
            })))
          total += done.filter(Boolean).length
        }
      })
    }
  })
}) {}
