import type { IssuingSettings } from "@issuing/core"
import { Either } from "effect"
import type { IssuingOptions } from "./App.js"
import { type Iso8583Config, loadConfig, resolveVaultKeys } from "./config.js"
import { normalizeBasePath } from "./Mount.js"
import { storeFor } from "./Store.js"

/** What only the host app knows: where it mounts the platform. */
export interface HostMount {
  /** The path the host app mounts the platform under (e.g. `/issuing`); part of the derived base URL. */
  readonly basePath?: string | undefined
}

/** `createIssuing`'s options from the environment, and the address the host app's server listens on. */
export interface HostConfig extends IssuingOptions {
  /** Every setting, `baseUrl` the public URL of the mount. */
  readonly settings: IssuingSettings
  /** The mount path, normalized (`/issuing`); `""` when none was given. */
  readonly basePath: string
  /**
   * ISSUING_HOST and ISSUING_PORT (default 127.0.0.1 and 8080): listen there. The default base URL
   * and whether private webhook targets are allowed are decided by this address, as for `issuing serve`.
   */
  readonly listen: { readonly host: string; readonly port: number }
  /**
   * ISSUING_ISO8583_LISTEN and its TLS and organization variables, when set: pass it to
   * `startIso8583Host(issuing, config.iso8583)` (docs/iso8583.md#running-it).
   */
  readonly iso8583: Iso8583Config | undefined
}

/**
 * `createIssuing`'s options from the same `ISSUING_*` variables `issuing serve` reads
 * (README.md#configuration): the store of ISSUING_DATABASE_URL, the vault keys of ISSUING_VAULT_KEY
 * (in sandbox, the generated key file when unset), every setting, the mount path, and `listen`, the
 * address the host's server must listen on. Unset, ISSUING_BASE_URL is derived from that address
 * and the mount path (`http://127.0.0.1:8080/issuing`), and private webhook targets are allowed
 * only in a sandbox listening on loopback. A bad value throws an Error with the server's own
 * one-line message. Use it as `createIssuing({ ...configFromEnv(process.env, { basePath: "/issuing" }), store })`
 * and `server.listen(config.listen.port, config.listen.host)`.
 */
export const configFromEnv = (env: Record<string, string | undefined> = process.env, mount: HostMount = {}): HostConfig => {
  const loaded = loadConfig(env)
  if (Either.isLeft(loaded)) throw new Error(loaded.left)
  const config = loaded.right
  const basePath = normalizeBasePath(mount.basePath)
  const settings =
    config.baseUrlFromListenAddress === true ? { ...config.settings, baseUrl: `${config.settings.baseUrl}${basePath}` } : config.settings
  return {
    store: storeFor(config.database),
    vaultKeys: resolveVaultKeys(config),
    settings,
    basePath,
    listen: { host: config.host, port: config.port },
    iso8583: config.iso8583
  }
}
