import { Cards, Webhooks } from "@issuing/core"
import { Effect } from "effect"
import { createIssuing } from "../App.js"
import { resolveVaultKeys, type ServerConfig } from "../config.js"
import { storeFor } from "../Store.js"

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/**
 * Re-seals everything the vault protects long-term under the current key: card numbers and codes
 * (with their fingerprints) and webhook signing secrets. Each count is what committed batches
 * re-sealed. Idempotent; safe to run while the server serves traffic.
 */
export const resealAll = async (config: ServerConfig): Promise<number> => {
  const instance = await createIssuing({ store: storeFor(config.database), vaultKeys: resolveVaultKeys(config), settings: config.settings })
  try {
    const cards = await instance.runtime.runPromise(Effect.flatMap(Cards, (service) => service.resealWithCurrentKey))
    process.stdout.write(`issuing: re-sealed ${plural(cards, "card", "cards")} under the current vault key\n`)
    const subscriptions = await instance.runtime.runPromise(Effect.flatMap(Webhooks, (service) => service.resealWithCurrentKey))
    process.stdout.write(
      `issuing: re-sealed ${plural(subscriptions, "webhook subscription secret", "webhook subscription secrets")} under the current vault key\n`
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
