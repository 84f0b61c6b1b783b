import {
  DEFAULT_PRODUCTION_WEBHOOK_PORTS,
  type Environment,
  type IssuingSettings,
  looksLikeSecret,
  MIN_CHOSEN_SECRET_LENGTH,
  parseVaultKeys
} from "@issuing/core"
import { Either } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Where the server keeps its data, as ISSUING_DATABASE_URL names it; on PostgreSQL also the
 * listening connection's URL (ISSUING_DATABASE_LISTEN_URL, default the database URL) and whether
 * LISTEN/NOTIFY is used (ISSUING_PG_NOTIFY, default on).
 */
export type DatabaseTarget =
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: string; readonly listenUrl?: string | undefined; readonly notify?: boolean | undefined }

/** The server's configuration, read from the environment (README.md#configuration). */
export interface ServerConfig {
  readonly database: DatabaseTarget
  readonly host: string
  readonly port: number
  readonly settings: IssuingSettings
  /** Where the vault key comes from; a sandbox without ISSUING_VAULT_KEY uses (or creates) this file. */
  readonly vaultKey:
    | { readonly source: "env"; readonly keys: ReadonlyArray<Buffer> }
    | {
        readonly source: "file"
        readonly path: string
      }
  readonly bootstrapApiKey: string | undefined
  /** True when ISSUING_BASE_URL is not set: the server derives the base URL from its listen address. */
  readonly baseUrlFromListenAddress?: boolean | undefined
  /** ISSUING_TEST_CLOCK_OFFSET_MS: the clock shifted ahead, for tests (docs/card-transactions.md#expiry). */
  readonly clockOffsetMs?: number | undefined
  /** ISSUING_ISO8583_*: the ISO 8583 authorization host `issuing serve` starts beside the API (docs/iso8583.md); unset, none. */
  readonly iso8583?: Iso8583Config | undefined
}

/** Where the ISO 8583 host listens, for which organization, and its mutual TLS files (paths or PEM text). */
export interface Iso8583Config {
  readonly host: string
  readonly port: number
  readonly organizationId: string | undefined
  readonly tls: { readonly cert: string; readonly key: string; readonly ca: string } | undefined
}

type Env = Record<string, string | undefined>

class ConfigProblem {
  constructor(readonly line: string) {}
}

const fail = (variable: string, problem: string): never => {
  throw new ConfigProblem(`Invalid configuration: ${variable} ${problem}`)
}

const text = (env: Env, name: string): string | undefined => {
  const value = env[name]
  return value === undefined || value.trim() === "" ? undefined : value.trim()
}

const integer = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const value = text(env, name)
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    return fail(name, `must be an integer from ${min} to ${max} (got "${value}")`)
  }
  return Number(value)
}

const positiveNumber = (env: Env, name: string, fallback: number): number => {
  const value = text(env, name)
  if (value === undefined) return fallback
  const number = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || !(number > 0) || number > 1_000_000) {
    return fail(name, `must be a positive number (got "${value}")`)
  }
  return number
}

const boolean = (env: Env, name: string, fallback: boolean): boolean => {
  const value = text(env, name)?.toLowerCase()
  if (value === undefined) return fallback
  if (value === "true" || value === "1" || value === "yes") return true
  if (value === "false" || value === "0" || value === "no") return false
  return fail(name, `must be true or false: true, 1 or yes, false, 0 or no, in any case (got "${value}")`)
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Bound on the number of retries a schedule may hold. */
export const MAX_RETRY_SCHEDULE_ENTRIES = 30

/** Parses a retry schedule such as `5s,5m,30m,2h`; a string is the problem. */
export const parseRetrySchedule = (value: string): ReadonlyArray<number> | string => {
  const parts = value.split(",").map((part) => part.trim())
  if (parts.length > MAX_RETRY_SCHEDULE_ENTRIES) return `must hold at most ${MAX_RETRY_SCHEDULE_ENTRIES} delays`
  const delays: Array<number> = []
  for (const part of parts) {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(part)
    if (match === null) return `must be a comma-separated list of delays like 5s,5m,2h (bad entry "${part}")`
    delays.push(Number(match[1]) * DURATION_UNITS_MS[match[2]!]!)
  }
  return delays
}

/** ISSUING_WEBHOOK_ALLOWED_PORTS: a comma-separated list of ports 1–65535, or `any`. */
const allowedPorts = (env: Env, environment: Environment): ReadonlyArray<number> | null => {
  const value = text(env, "ISSUING_WEBHOOK_ALLOWED_PORTS")
  if (value === undefined) return environment === "production" ? DEFAULT_PRODUCTION_WEBHOOK_PORTS : null
  if (value.toLowerCase() === "any") return null
  const parts = value.split(",").map((part) => part.trim())
  if (!parts.every((part) => /^\d{1,5}$/.test(part) && Number(part) >= 1 && Number(part) <= 65535)) {
    return fail("ISSUING_WEBHOOK_ALLOWED_PORTS", `must be a comma-separated list of ports from 1 to 65535, or any (got "${value}")`)
  }
  return [...new Set(parts.map(Number))]
}

const parseDatabase = (value: string): DatabaseTarget => {
  if (value === "sqlite::memory:") return { kind: "sqlite", filename: ":memory:" }
  if (value.startsWith("sqlite:")) {
    const filename = value.slice("sqlite:".length)
    if (filename === "") return fail("ISSUING_DATABASE_URL", "must name a file after sqlite: (e.g. sqlite:./.data/issuing.db)")
    return { kind: "sqlite", filename }
  }
  if (value.startsWith("postgres://") || value.startsWith("postgresql://")) {
    try {
      new URL(value)
    } catch {
      return fail("ISSUING_DATABASE_URL", "is not a valid postgres:// URL")
    }
    return { kind: "postgres", url: value }
  }
  return fail("ISSUING_DATABASE_URL", `must be sqlite:PATH, sqlite::memory: or postgres://… (got "${value.split(":")[0]}:…")`)
}

/** ISSUING_DATABASE_LISTEN_URL and ISSUING_PG_NOTIFY, on a PostgreSQL target (docs/operations.md#pgbouncer). */
const readListening = (env: Env, database: DatabaseTarget): DatabaseTarget => {
  const listenUrl = text(env, "ISSUING_DATABASE_LISTEN_URL")
  const notifyText = text(env, "ISSUING_PG_NOTIFY")?.toLowerCase()
  if (notifyText !== undefined && notifyText !== "on" && notifyText !== "off") {
    fail("ISSUING_PG_NOTIFY", `must be on or off (got "${notifyText}")`)
  }
  if (listenUrl !== undefined) {
    let valid = listenUrl.startsWith("postgres://") || listenUrl.startsWith("postgresql://")
    try {
      new URL(listenUrl)
    } catch {
      valid = false
    }
    if (!valid) fail("ISSUING_DATABASE_LISTEN_URL", "is not a valid postgres:// URL")
    if (database.kind !== "postgres") fail("ISSUING_DATABASE_LISTEN_URL", "applies only when ISSUING_DATABASE_URL is postgres://…")
  }
  if (database.kind !== "postgres") return database
  return { ...database, listenUrl, notify: notifyText !== "off" }
}

/** ISSUING_ENVIRONMENT: sandbox (the default) or production. */
const readEnvironment = (env: Env): Environment => {
  const value = text(env, "ISSUING_ENVIRONMENT") ?? "sandbox"
  if (value !== "sandbox" && value !== "production") {
    fail("ISSUING_ENVIRONMENT", `must be sandbox or production (got "${value}")`)
  }
  return value as Environment
}

/** ISSUING_BASE_URL, without trailing slashes; unset, the listen address's URL. */
const readBaseUrl = (env: Env, host: string, port: number): string => {
  const value = text(env, "ISSUING_BASE_URL") ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`
  let baseUrl: URL
  try {
    baseUrl = new URL(value)
  } catch {
    return fail("ISSUING_BASE_URL", `must be an absolute http(s) URL (got "${value}")`)
  }
  if (baseUrl.protocol !== "http:" && baseUrl.protocol !== "https:") {
    fail("ISSUING_BASE_URL", `must be an http or https URL (got "${value}")`)
  }
  return baseUrl.toString().replace(/\/+$/, "")
}

/** ISSUING_VAULT_KEY; required in production, a sandbox without it uses (or creates) `.data/vault.key`. */
const readVaultKey = (env: Env, environment: Environment, cwd: string): ServerConfig["vaultKey"] => {
  const value = text(env, "ISSUING_VAULT_KEY")
  if (value !== undefined) {
    const keys = parseVaultKeys(value)
    if (typeof keys === "string") fail("ISSUING_VAULT_KEY", keys)
    return { source: "env", keys: keys as ReadonlyArray<Buffer> }
  }
  if (environment === "production") return fail("ISSUING_VAULT_KEY", "is required in production (base64 of 32 random bytes)")
  return { source: "file", path: path.resolve(cwd, ".data/vault.key") }
}

/** ISSUING_BOOTSTRAP_API_KEY: the first admin key's secret, when the operator chooses it. */
const readBootstrapApiKey = (env: Env): string | undefined => {
  const value = text(env, "ISSUING_BOOTSTRAP_API_KEY")
  // Chosen by a person, unlike generated keys (docs/decisions.md#organizations-programs-and-api-keys).
  if (value !== undefined && (value.length < MIN_CHOSEN_SECRET_LENGTH || !looksLikeSecret(value))) {
    fail("ISSUING_BOOTSTRAP_API_KEY", `must be ${MIN_CHOSEN_SECRET_LENGTH} to 256 printable characters without spaces`)
  }
  return value
}

/** ISSUING_WEBHOOK_RETRY_SCHEDULE, when set. */
const readWebhookRetrySchedule = (env: Env): ReadonlyArray<number> | undefined => {
  const value = text(env, "ISSUING_WEBHOOK_RETRY_SCHEDULE")
  if (value === undefined) return undefined
  const schedule = parseRetrySchedule(value)
  if (typeof schedule === "string") fail("ISSUING_WEBHOOK_RETRY_SCHEDULE", schedule)
  return schedule as ReadonlyArray<number>
}

/** ISSUING_WEBHOOK_DISABLE_AFTER, when set: one duration of at least a second. */
const readWebhookDisableAfter = (env: Env): number | undefined => {
  const value = text(env, "ISSUING_WEBHOOK_DISABLE_AFTER")
  if (value === undefined) return undefined
  const parsed = parseRetrySchedule(value)
  if (typeof parsed === "string" || parsed.length !== 1 || parsed[0]! < 1000) {
    fail("ISSUING_WEBHOOK_DISABLE_AFTER", `must be one duration of at least 1s like 5d or 12h (got "${value}")`)
  }
  return (parsed as ReadonlyArray<number>)[0]!
}

/** ISSUING_OAUTH_INTERACTION_URL, when set: an absolute http(s) URL. */
const readOAuthInteractionUrl = (env: Env): string | undefined => {
  const value = text(env, "ISSUING_OAUTH_INTERACTION_URL")
  if (value === undefined) return undefined
  let interactionUrl: URL | undefined
  try {
    interactionUrl = new URL(value)
  } catch {
    interactionUrl = undefined
  }
  if (interactionUrl === undefined || (interactionUrl.protocol !== "http:" && interactionUrl.protocol !== "https:")) {
    fail("ISSUING_OAUTH_INTERACTION_URL", `must be an absolute http(s) URL (got "${value}")`)
  }
  return value
}

/** A PEM file's path (it must exist) or PEM text, as an ISSUING_ISO8583_TLS_* variable gives it. */
const pemSource = (name: string, value: string): string => {
  if (!value.includes("-----BEGIN") && !fs.existsSync(value)) fail(name, `names no file (got "${value}")`)
  return value
}

/**
 * ISSUING_ISO8583_LISTEN (`HOST:PORT`), ISSUING_ISO8583_ORGANIZATION_ID and ISSUING_ISO8583_TLS_CERT,
 * _KEY and _CA (all three or none; required off loopback): docs/iso8583.md#running-it.
 */
const readIso8583 = (env: Env): Iso8583Config | undefined => {
  const listen = text(env, "ISSUING_ISO8583_LISTEN")
  const files = {
    cert: text(env, "ISSUING_ISO8583_TLS_CERT"),
    key: text(env, "ISSUING_ISO8583_TLS_KEY"),
    ca: text(env, "ISSUING_ISO8583_TLS_CA")
  }
  const organizationId = text(env, "ISSUING_ISO8583_ORGANIZATION_ID")
  if (listen === undefined) return undefined
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(listen)
  if (match === null || Number(match[2]) > 65535)
    return fail("ISSUING_ISO8583_LISTEN", `must be HOST:PORT, e.g. 127.0.0.1:8583 (got "${listen}")`)
  const host = match[1]!.replace(/^\[|\]$/g, "")
  const given = Object.values(files).filter((value) => value !== undefined).length
  if (given !== 0 && given !== 3) {
    fail("ISSUING_ISO8583_TLS_CERT", "ISSUING_ISO8583_TLS_KEY and ISSUING_ISO8583_TLS_CA must be set together (mutual TLS)")
  }
  if (given === 0 && !isLoopbackHost(host)) {
    fail(
      "ISSUING_ISO8583_LISTEN",
      `is off loopback (${host}): the ISO 8583 host needs mutual TLS there; set ISSUING_ISO8583_TLS_CERT, ISSUING_ISO8583_TLS_KEY and ISSUING_ISO8583_TLS_CA, or listen on 127.0.0.1`
    )
  }
  if (organizationId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(organizationId)) {
    fail("ISSUING_ISO8583_ORGANIZATION_ID", `must be an organization id, a UUID (got "${organizationId}")`)
  }
  const tls =
    given === 3
      ? {
          cert: pemSource("ISSUING_ISO8583_TLS_CERT", files.cert!),
          key: pemSource("ISSUING_ISO8583_TLS_KEY", files.key!),
          ca: pemSource("ISSUING_ISO8583_TLS_CA", files.ca!)
        }
      : undefined
  return { host, port: Number(match[2]), organizationId, tls }
}

/** True when ISSUING_HOST is a loopback address or `localhost`: the server listens on loopback only. */
export const isLoopbackHost = (host: string): boolean => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return bare.toLowerCase() === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

/**
 * Reads and validates the environment (the variables of README.md#configuration). A bad value gives
 * one line naming the variable (secret values are never echoed); variables are checked in a fixed
 * order, so with several bad ones the line always names the same one.
 */
export const loadConfig = (env: Env, cwd: string = process.cwd()): Either.Either<ServerConfig, string> => {
  try {
    const database = readListening(env, parseDatabase(text(env, "ISSUING_DATABASE_URL") ?? "sqlite:./.data/issuing.db"))
    const host = text(env, "ISSUING_HOST") ?? "127.0.0.1"
    const port = integer(env, "ISSUING_PORT", 8080, 0, 65535)
    const environment = readEnvironment(env)
    const baseUrl = readBaseUrl(env, host, port)
    const vaultKey = readVaultKey(env, environment, cwd)
    const bootstrapApiKey = readBootstrapApiKey(env)
    const webhookRetryScheduleMs = readWebhookRetrySchedule(env)
    const webhookDisableAfterMs = readWebhookDisableAfter(env)
    const interactionUrlText = readOAuthInteractionUrl(env)

    const settings: IssuingSettings = {
      environment,
      baseUrl,
      rateLimitPerSecond: positiveNumber(env, "ISSUING_RATE_LIMIT_PER_SECOND", 100),
      rateLimitBurst: integer(env, "ISSUING_RATE_LIMIT_BURST", 200, 1, 1_000_000),
      rateLimitLeaseTimeoutMs: integer(env, "ISSUING_RATE_LIMIT_LEASE_TIMEOUT_MS", 250, 10, 60_000),
      embedSessionTtlSeconds: integer(env, "ISSUING_EMBED_SESSION_TTL_SECONDS", 300, 1, 86_400),
      panSearchPerMinute: integer(env, "ISSUING_PAN_SEARCH_PER_MINUTE", 20, 1, 10_000),
      panSearchMaxMisses: integer(env, "ISSUING_PAN_SEARCH_MAX_MISSES", 10, 1, 10_000),
      webhookRetryScheduleMs: webhookRetryScheduleMs ?? (parseRetrySchedule("5s,5m,30m,2h,5h,10h,10h") as ReadonlyArray<number>),
      webhookTimeoutMs: integer(env, "ISSUING_WEBHOOK_TIMEOUT_MS", 15_000, 1, 300_000),
      // A sandbox reachable from a network must not reach its own network (docs/webhooks.md#ssrf-guard).
      webhookAllowPrivateUrls: boolean(env, "ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS", environment === "sandbox" && isLoopbackHost(host)),
      webhookAllowedPorts: allowedPorts(env, environment),
      webhookDisableAfterMs: webhookDisableAfterMs ?? 5 * 86_400_000,
      webhookConcurrency: integer(env, "ISSUING_WEBHOOK_CONCURRENCY", 64, 1, 1024),
      webhookMaxPayloadBytes: integer(env, "ISSUING_WEBHOOK_MAX_PAYLOAD_BYTES", 256 * 1024, 1024, 16 * 1024 * 1024),
      webhookMaxResponseBodyBytes: integer(env, "ISSUING_WEBHOOK_MAX_RESPONSE_BODY_BYTES", 4096, 0, 1024 * 1024),
      webhookStorePrivateResponseBodies: false,
      maxBodyBytes: integer(env, "ISSUING_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
      oauthAccessTokenTtlSeconds: integer(env, "ISSUING_OAUTH_ACCESS_TOKEN_TTL_SECONDS", 900, 1, 86_400),
      oauthRefreshTokenTtlSeconds: integer(env, "ISSUING_OAUTH_REFRESH_TOKEN_TTL_SECONDS", 30 * 86_400, 60, 365 * 86_400),
      oauthCodeTtlSeconds: 60,
      oauthRateLimitPerSecond: 5,
      oauthRateLimitBurst: 20,
      oauthInteractionUrl: interactionUrlText ?? null,
      authorizationHoldDays: integer(env, "ISSUING_AUTHORIZATION_HOLD_DAYS", 7, 1, 30)
    }
    const baseUrlFromListenAddress = text(env, "ISSUING_BASE_URL") === undefined
    const clockOffsetMs = integer(env, "ISSUING_TEST_CLOCK_OFFSET_MS", 0, 0, 3_650 * 86_400_000)
    const iso8583 = readIso8583(env)
    return Either.right({ database, host, port, settings, vaultKey, bootstrapApiKey, baseUrlFromListenAddress, clockOffsetMs, iso8583 })
  } catch (error) {
    if (error instanceof ConfigProblem) return Either.left(error.line)
    throw error
  }
}

/**
 * The vault keys in force: from ISSUING_VAULT_KEY, or (sandbox only) from the key file, created
 * with 32 random bytes and mode 0600 on first start.
 */
export const resolveVaultKeys = (config: ServerConfig): ReadonlyArray<Buffer> => {
  if (config.vaultKey.source === "env") return config.vaultKey.keys
  const file = config.vaultKey.path
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    try {
      fs.writeFileSync(file, `${crypto.randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
  }
  const keys = parseVaultKeys(fs.readFileSync(file, "utf8"))
  if (typeof keys === "string") throw new Error(`The vault key file ${file} ${keys}`)
  return keys
}
