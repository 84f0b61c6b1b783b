import { Either } from "effect"
import type { IssuingOptions } from "./App.js"
import { loadConfig, resolveVaultKeys } from "./config.js"
import { storeFor } from "./Store.js"

/**
 * `createIssuing`'s options from the same `ISSUING_*` variables `issuing serve` reads
 * (README.md#configuration): the store of ISSUING_DATABASE_URL, the vault keys of ISSUING_VAULT_KEY
 * (in sandbox, the generated key file when unset) and every setting. A bad value throws an Error
 * with the server's own one-line message. Spread it and add what only the host knows:
 * `createIssuing({ ...configFromEnv(), basePath: "/issuing" })`.
 */
export const configFromEnv = (env: Record<string, string | undefined> = process.env): IssuingOptions => {
  const loaded = loadConfig(env)
  if (Either.isLeft(loaded)) throw new Error(loaded.left)
  const config = loaded.right
  return { store: storeFor(config.database), vaultKeys: resolveVaultKeys(config), settings: config.settings }
}
