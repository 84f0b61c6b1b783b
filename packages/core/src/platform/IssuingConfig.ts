import { Context, Layer } from "effect"

/** Whether the platform runs against real money (`production`) or simulations (`sandbox`). */
export type Environment = "sandbox" | "production"

/** Runtime settings the domain needs. The CLI reads them from the environment (README.md#configuration). */
export interface IssuingSettings {
  readonly environment: Environment
  /** Public base URL, used in embed_url and doc_url (no trailing slash). */
  readonly baseUrl: string
  readonly rateLimitPerSecond: number
  readonly rateLimitBurst: number
  /** How long a request waits for a rate-limit lease before its node limits the key alone (docs/operations.md#rate-limits-across-nodes). */
  readonly rateLimitLeaseTimeoutMs: number
  readonly embedSessionTtlSeconds: number
  /** Search-by-pan requests one key may make per rolling minute (docs/card-data.md#reveal-and-search-by-pan). */
  readonly panSearchPerMinute: number
  /** Search-by-pan misses one key may have per rolling hour before its searches are refused. */
  readonly panSearchMaxMisses: number
  /** Delays between delivery attempts after the first, in milliseconds. */
  readonly webhookRetryScheduleMs: ReadonlyArray<number>
  readonly webhookTimeoutMs: number
  readonly webhookAllowPrivateUrls: boolean
  /** Ports a webhook URL may name; null: any (docs/webhooks.md#ssrf-guard). */
  readonly webhookAllowedPorts: ReadonlyArray<number> | null
  /** A subscription whose deliveries have failed without a success for this long is disabled. */
  readonly webhookDisableAfterMs: number
  /** Deliveries in flight at once per worker process. */
  readonly webhookConcurrency: number
  /** Largest delivered payload; a bigger event fails its delivery without a request. */
  readonly webhookMaxPayloadBytes: number
  /** Receiver response bodies are kept up to this many bytes. */
  readonly webhookMaxResponseBodyBytes: number
  /**
   * Keep the bodies of receivers at loopback or private addresses too (false: only their status,
   * docs/webhooks.md#ssrf-guard). For embedding and tests whose receivers run on loopback; never
   * read from the environment.
   */
  readonly webhookStorePrivateResponseBodies: boolean
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number
  /** OAuth access token lifetime (docs/oauth.md#lifetimes). */
  readonly oauthAccessTokenTtlSeconds: number
  /** OAuth refresh token lifetime. */
  readonly oauthRefreshTokenTtlSeconds: number
  /**
   * The /oauth endpoints' token bucket per client and client address (docs/oauth.md#throttling):
   * requests per second and burst. Settable for tests and embedding, not from the environment.
   */
  readonly oauthRateLimitPerSecond: number
  readonly oauthRateLimitBurst: number
  /** Authorization code lifetime (60 s; settable for tests and embedding, not from the environment). */
  readonly oauthCodeTtlSeconds: number
  /** Days an authorization's hold stays open before the worker releases it (docs/card-transactions.md#expiry). */
  readonly authorizationHoldDays: number
  /** The host app's consent page: /oauth/authorize redirects there with `?interaction=<id>`; null: OAuth authorization is off. */
  readonly oauthInteractionUrl: string | null
}

/** The ports a production webhook URL may name unless ISSUING_WEBHOOK_ALLOWED_PORTS says otherwise. */
export const DEFAULT_PRODUCTION_WEBHOOK_PORTS: ReadonlyArray<number> = [443, 80]

/** The documented defaults (README.md#configuration) for everything but the base URL. */
export const defaultSettings = (overrides: Partial<IssuingSettings> = {}): IssuingSettings => {
  const environment = overrides.environment ?? "sandbox"
  return {
    environment,
    baseUrl: "http://127.0.0.1:8080",
    rateLimitPerSecond: 100,
    rateLimitBurst: 200,
    rateLimitLeaseTimeoutMs: 250,
    embedSessionTtlSeconds: 300,
    panSearchPerMinute: 20,
    panSearchMaxMisses: 10,
    webhookRetryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    webhookTimeoutMs: 15_000,
    webhookAllowPrivateUrls: environment === "sandbox",
    webhookAllowedPorts: environment === "production" ? DEFAULT_PRODUCTION_WEBHOOK_PORTS : null,
    webhookDisableAfterMs: 5 * 24 * 60 * 60 * 1000,
    webhookConcurrency: 64,
    webhookMaxPayloadBytes: 256 * 1024,
    webhookMaxResponseBodyBytes: 4096,
    webhookStorePrivateResponseBodies: false,
    maxBodyBytes: 1024 * 1024,
    oauthAccessTokenTtlSeconds: 900,
    oauthRefreshTokenTtlSeconds: 30 * 86_400,
    oauthCodeTtlSeconds: 60,
    oauthRateLimitPerSecond: 5,
    oauthRateLimitBurst: 20,
    oauthInteractionUrl: null,
    authorizationHoldDays: 7,
    ...overrides
  }
}

/** The settings in force. */
export class IssuingConfig extends Context.Tag("@issuing/core/IssuingConfig")<IssuingConfig, IssuingSettings>() {
  /** A layer holding the given settings. */
  static readonly layer = (settings: IssuingSettings): Layer.Layer<IssuingConfig> => Layer.succeed(IssuingConfig, settings)
}
