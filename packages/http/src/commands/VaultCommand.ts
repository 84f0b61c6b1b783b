import { AuthorizationEndpoints, Cards, CardStore, Vault, Webhooks, WebhookStore } from "@issuing/core"
import { Context, Effect, Layer } from "effect"
import { createIssuing, type StoreLayer } from "../App.js"
import { resolveVaultKeys, type ServerConfig } from "../config.js"
import { progress, type StepProgress } from "../Progress.js"
import { storeFor } from "../Store.js"

/** Rows read per query while counting what there is to re-seal. */
const COUNT_BATCH = 1000
/** The most webhook subscriptions counted up front (a total above it shows as unknown). */
const MAX_COUNTED_SUBSCRIPTIONS = 100_000

/** The step each store port's re-seal writes report to while a re-seal runs. */
interface Reporting {
  cards?: StepProgress | undefined
  subscriptions?: StepProgress | undefined
}

/** The store with its two re-seal writes counted: each re-sealed row advances the running step. */
const countingStore = (store: StoreLayer, reporting: Reporting): StoreLayer =>
  Layer.map(store, (context) => {
    const cards = Context.get(context, CardStore)
    const webhooks = Context.get(context, WebhookStore)
    return context.pipe(
      Context.add(CardStore, {
        ...cards,
        reseal: (...args: Parameters<typeof cards.reseal>) =>
          Effect.tap(cards.reseal(...args), (done) => done && reporting.cards?.advance())
      }),
      Context.add(WebhookStore, {
        ...webhooks,
        resealSubscription: (...args: Parameters<typeof webhooks.resealSubscription>) =>
          Effect.tap(webhooks.resealSubscription(...args), (done) => done && reporting.subscriptions?.advance())
      })
    )
  })

/** What there is to re-seal, through the same store queries the re-seal itself runs. */
const toReseal = Effect.gen(function* () {
  const vault = yield* Vault
  const cardStore = yield* CardStore
  const webhookStore = yield* WebhookStore
  let cards = 0
  for (let afterId = ""; ; ) {
    const batch = yield* cardStore.cardsToReseal(vault.currentKeyId, afterId, COUNT_BATCH)
    cards += batch.length
    if (batch.length < COUNT_BATCH) break
    afterId = batch.at(-1)!.card.id
  }
  const subscriptions = (yield* webhookStore.subscriptionsSealedWithOtherKeys(vault.currentKeyId, MAX_COUNTED_SUBSCRIPTIONS)).length
  return { cards, subscriptions: subscriptions < MAX_COUNTED_SUBSCRIPTIONS ? subscriptions : undefined }
})

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/**
 * Re-seals everything the vault protects long-term under the current key: card numbers and codes
 * (with their fingerprints), webhook signing secrets and authorization endpoint secrets. Each count is what committed batches
 * re-sealed. Idempotent; safe to run while the server serves traffic.
 */
export const resealAll = async (config: ServerConfig): Promise<number> => {
  const reporting: Reporting = {}
  const instance = await createIssuing({
    store: countingStore(storeFor(config.database), reporting),
    vaultKeys: resolveVaultKeys(config),
    settings: config.settings,
    // A one-shot command: no background work, and stdout is its result.
    background: false,
    log: null
  })
  // A live line on stderr on a terminal; otherwise the result line of each step carries its figures
  // and stderr stays empty (scripts may treat any stderr output as a problem).
  const report = progress(process.stderr, { lines: false })
  try {
    const totals = await instance.runtime.runPromise(toReseal)
    reporting.cards = report.step("re-sealing cards", totals.cards)
    const cards = await instance.runtime.runPromise(Effect.flatMap(Cards, (service) => service.resealWithCurrentKey))
    const cardFigures = reporting.cards.finish(cards)
    process.stdout.write(`issuing: re-sealed ${plural(cards, "card", "cards")} under the current vault key (${cardFigures})\n`)
    reporting.subscriptions = report.step("re-sealing webhook subscription secrets", totals.subscriptions)
    const subscriptions = await instance.runtime.runPromise(Effect.flatMap(Webhooks, (service) => service.resealWithCurrentKey))
    const subscriptionFigures = reporting.subscriptions.finish(subscriptions)
    process.stdout.write(
      `issuing: re-sealed ${plural(subscriptions, "webhook subscription secret", "webhook subscription secrets")} under the current vault key (${subscriptionFigures})\n`
    )
    const endpoints = await instance.runtime.runPromise(Effect.flatMap(AuthorizationEndpoints, (service) => service.resealWithCurrentKey))
    process.stdout.write(
      `issuing: re-sealed ${plural(endpoints, "authorization endpoint", "authorization endpoints")} under the current vault key\n`
    )
    return 0
  } finally {
    await instance.dispose()
  }
}

/**
 * `issuing vault reseal`: after rotating ISSUING_VAULT_KEY to `new,old`, re-encrypts card data and
 * webhook signing secrets under the new key, so the old key can then be dropped.
 */
export const vaultCommand = async (config: ServerConfig, args: ReadonlyArray<string>): Promise<number> => {
  if (args[0] !== "reseal") {
    process.stderr.write("issuing: usage: issuing vault reseal\n")
    return 2
  }
  return resealAll(config)
}
