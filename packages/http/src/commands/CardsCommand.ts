import { Cards } from "@issuing/core"
import { Effect } from "effect"
import { createIssuing } from "../App.js"
import { resolveVaultKeys, type ServerConfig } from "../config.js"
import { storeFor } from "../Store.js"

/**
 * `issuing cards reseal`: after rotating ISSUING_VAULT_KEY to `new,old`, re-encrypts every card's
 * number and code (and recomputes its fingerprint) under the new key, so the old key can then be
 * dropped. Idempotent; safe to run while the server serves traffic.
 */
export const cardsCommand = async (config: ServerConfig, args: ReadonlyArray<string>): Promise<number> => {
  if (args[0] !== "reseal") {
    process.stderr.write("issuing: usage: issuing cards reseal\n")
    return 2
  }
  const instance = await createIssuing({ store: storeFor(config.database), vaultKeys: resolveVaultKeys(config), settings: config.settings })
  try {
    const count = await instance.runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.resealWithCurrentKey))
    process.stdout.write(`issuing: re-sealed ${count} card${count === 1 ? "" : "s"} under the current vault key\n`)
    return 0
  } finally {
    await instance.dispose()
  }
}
