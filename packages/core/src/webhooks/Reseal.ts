import { Effect } from "effect"
import { nowMs } from "../platform/Time.js"
import type { VaultService } from "../vault/Vault.js"
import { type StoredSubscription, WEBHOOK_LIMITS } from "./Records.js"
import type { WebhookDeps } from "./Subscriptions.js"
import type { SealedSecrets } from "./WebhookStore.js"

/** Batches in a row that re-seal nothing before the re-seal gives up (only concurrent rotations cause them). */
const MAX_IDLE_BATCHES = 5

/** A sealed value under the current key: kept when it already is, else decrypted and sealed again. */
const resealed = (vault: VaultService, subscription: StoredSubscription, sealed: string): string => {
  if (sealed.startsWith(`v1.${vault.currentKeyId}.`)) return sealed
  try {
    return vault.encrypt(vault.decrypt(sealed))
  } catch (error) {
    throw new Error(`webhook subscription ${subscription.id}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The secrets a subscription keeps after a re-seal: a previous secret past its grace period no longer signs and is dropped. */
const nextSecrets = (vault: VaultService, subscription: StoredSubscription, now: number): SealedSecrets => {
  const previousLive =
    subscription.previous_secret_sealed !== null &&
    subscription.previous_secret_expires_at !== null &&
    Date.parse(subscription.previous_secret_expires_at) > now
  return {
    secret_sealed: resealed(vault, subscription, subscription.secret_sealed),
    previous_secret_sealed: previousLive ? resealed(vault, subscription, subscription.previous_secret_sealed!) : null,
    previous_secret_expires_at: previousLive ? subscription.previous_secret_expires_at : null
  }
}

/**
 * Re-seals under the current vault key every subscription secret sealed under another one (after
 * rotating ISSUING_VAULT_KEY to `new,old`), so the old key can be dropped without breaking signing
 * (docs/webhooks.md, Vault key rotation). Batches of 200, one transaction each, compare-and-set
 * per subscription (a rotation meanwhile wins and is looked at again). Returns how many
 * subscriptions were re-sealed, counted from committed batches. Safe to rerun and to run while serving.
 */
export const resealWithCurrentKey = (deps: WebhookDeps) =>
  Effect.gen(function* () {
    let total = 0
    let idleBatches = 0
    for (;;) {
      const batch = yield* deps.store.subscriptionsSealedWithOtherKeys(deps.vault.currentKeyId, WEBHOOK_LIMITS.resealBatchSize)
      if (batch.length === 0) return total
      const done = yield* deps.transactor.withTransaction(
        Effect.flatMap(nowMs, (now) =>
          Effect.forEach(batch, (subscription) =>
            Effect.suspend(() => deps.store.resealSubscription(subscription.id, subscription, nextSecrets(deps.vault, subscription, now)))
          )
        )
      )
      const count = done.filter(Boolean).length
      total += count
      idleBatches = count === 0 ? idleBatches + 1 : 0
      if (idleBatches >= MAX_IDLE_BATCHES) {
        return yield* Effect.dieMessage("webhook subscriptions keep changing during the re-seal; run it again")
      }
    }
  })
