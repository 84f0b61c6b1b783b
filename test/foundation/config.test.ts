import { configFromEnv, loadConfig } from "@issuing/http"
import { Either } from "effect"
import { describe, expect, it } from "vitest"

const problem = (env: Record<string, string>) => {
  const result = loadConfig(env, "/tmp")
  if (Either.isRight(result)) throw new Error(`Expected a configuration error for ${JSON.stringify(env)}`)
  return result.left
}

// The configuration table of README.md#configuration: defaults, and one line naming the variable for every bad value.
describe("configuration from the environment", () => {
  it("applies the documented defaults", () => {
    const config = Either.getOrThrow(loadConfig({}, "/srv/app"))
    expect(config.database).toEqual({ kind: "sqlite", filename: "./.data/issuing.db" })
    expect(config.host).toBe("127.0.0.1")
    expect(config.port).toBe(8080)
    expect(config.settings.environment).toBe("sandbox")
    expect(config.settings.baseUrl).toBe("http://127.0.0.1:8080")
    expect(config.vaultKey).toEqual({ source: "file", path: "/srv/app/.data/vault.key" })
    expect(config.bootstrapApiKey).toBeUndefined()
    expect(config.settings.rateLimitPerSecond).toBe(100)
    expect(config.settings.rateLimitBurst).toBe(200)
    expect(config.settings.embedSessionTtlSeconds).toBe(300)
    expect(config.settings.panSearchPerMinute).toBe(20)
    expect(config.settings.panSearchMaxMisses).toBe(10)
    expect(config.settings.webhookRetryScheduleMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(config.settings.webhookTimeoutMs).toBe(15_000)
    expect(config.settings.webhookAllowPrivateUrls).toBe(true)
    expect(config.settings.maxBodyBytes).toBe(1024 * 1024)
    expect(config.settings.authorizationHoldDays).toBe(7)
  })

  it("reads every variable", () => {
    const key = Buffer.alloc(32, 1).toString("base64")
    const config = Either.getOrThrow(
      loadConfig({
        ISSUING_DATABASE_URL: "postgres://issuing:pw@db.internal:5432/issuing",
        ISSUING_HOST: "0.0.0.0",
        ISSUING_PORT: "9090",
        ISSUING_ENVIRONMENT: "production",
        ISSUING_BASE_URL: "https://api.example.com/issuing/",
        ISSUING_VAULT_KEY: key,
        ISSUING_BOOTSTRAP_API_KEY: "sk_live_bootstrap_bootstrap_bootstrap",
        ISSUING_RATE_LIMIT_PER_SECOND: "2.5",
        ISSUING_RATE_LIMIT_BURST: "10",
        ISSUING_EMBED_SESSION_TTL_SECONDS: "60",
        ISSUING_PAN_SEARCH_PER_MINUTE: "5",
        ISSUING_PAN_SEARCH_MAX_MISSES: "3",
        ISSUING_WEBHOOK_RETRY_SCHEDULE: "1s,250ms,1m",
        ISSUING_WEBHOOK_TIMEOUT_MS: "2000",
        ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "true",
        ISSUING_AUTHORIZATION_HOLD_DAYS: "30"
      })
    )
    expect(config.database).toEqual({
      kind: "postgres",
      url: "postgres://issuing:pw@db.internal:5432/issuing",
      listenUrl: undefined,
      notify: true
    })
    expect(config.host).toBe("0.0.0.0")
    expect(config.port).toBe(9090)
    expect(config.settings.environment).toBe("production")
    expect(config.settings.baseUrl).toBe("https://api.example.com/issuing")
    expect(config.vaultKey.source).toBe("env")
    expect(config.bootstrapApiKey).toBe("sk_live_bootstrap_bootstrap_bootstrap")
    expect(config.settings.rateLimitPerSecond).toBe(2.5)
    expect(config.settings.rateLimitBurst).toBe(10)
    expect(config.settings.embedSessionTtlSeconds).toBe(60)
    expect(config.settings.panSearchPerMinute).toBe(5)
    expect(config.settings.authorizationHoldDays).toBe(30)
    expect(config.settings.panSearchMaxMisses).toBe(3)
    expect(config.settings.webhookRetryScheduleMs).toEqual([1000, 250, 60_000])
    expect(config.settings.webhookTimeoutMs).toBe(2000)
    expect(config.settings.webhookAllowPrivateUrls).toBe(true)
    expect(
      Either.getOrThrow(loadConfig({ ISSUING_ENVIRONMENT: "production", ISSUING_VAULT_KEY: key })).settings.webhookAllowPrivateUrls
    ).toBe(false)
    expect(Either.getOrThrow(loadConfig({ ISSUING_DATABASE_URL: "sqlite::memory:" })).database).toEqual({
      kind: "sqlite",
      filename: ":memory:"
    })
  })

  const bad: Array<[string, Record<string, string>]> = [
    ["ISSUING_DATABASE_URL", { ISSUING_DATABASE_URL: "mysql://root:hunter2@localhost/db" }],
    ["ISSUING_DATABASE_URL", { ISSUING_DATABASE_URL: "sqlite:" }],
    ["ISSUING_DATABASE_URL", { ISSUING_DATABASE_URL: "postgres://user:hunter2@[bad" }],
    ["ISSUING_PORT", { ISSUING_PORT: "http" }],
    ["ISSUING_PORT", { ISSUING_PORT: "70000" }],
    ["ISSUING_ENVIRONMENT", { ISSUING_ENVIRONMENT: "staging" }],
    ["ISSUING_BASE_URL", { ISSUING_BASE_URL: "not a url" }],
    ["ISSUING_BASE_URL", { ISSUING_BASE_URL: "ftp://files.example.com" }],
    ["ISSUING_VAULT_KEY", { ISSUING_VAULT_KEY: "hunter2" }],
    ["ISSUING_VAULT_KEY", { ISSUING_VAULT_KEY: Buffer.alloc(16).toString("base64") }],
    ["ISSUING_VAULT_KEY", { ISSUING_ENVIRONMENT: "production" }],
    ["ISSUING_BOOTSTRAP_API_KEY", { ISSUING_BOOTSTRAP_API_KEY: "hunter2 with spaces" }],
    ["ISSUING_BOOTSTRAP_API_KEY", { ISSUING_BOOTSTRAP_API_KEY: "hunter2hunter2" }],
    ["ISSUING_BOOTSTRAP_API_KEY", { ISSUING_BOOTSTRAP_API_KEY: `hunter2${"x".repeat(24)}` }],
    ["ISSUING_RATE_LIMIT_PER_SECOND", { ISSUING_RATE_LIMIT_PER_SECOND: "0" }],
    ["ISSUING_RATE_LIMIT_PER_SECOND", { ISSUING_RATE_LIMIT_PER_SECOND: "fast" }],
    ["ISSUING_RATE_LIMIT_BURST", { ISSUING_RATE_LIMIT_BURST: "0" }],
    ["ISSUING_RATE_LIMIT_BURST", { ISSUING_RATE_LIMIT_BURST: "1.5" }],
    ["ISSUING_EMBED_SESSION_TTL_SECONDS", { ISSUING_EMBED_SESSION_TTL_SECONDS: "-5" }],
    ["ISSUING_AUTHORIZATION_HOLD_DAYS", { ISSUING_AUTHORIZATION_HOLD_DAYS: "0" }],
    ["ISSUING_AUTHORIZATION_HOLD_DAYS", { ISSUING_AUTHORIZATION_HOLD_DAYS: "31" }],
    ["ISSUING_TEST_CLOCK_OFFSET_MS", { ISSUING_TEST_CLOCK_OFFSET_MS: "-1" }],
    ["ISSUING_PAN_SEARCH_PER_MINUTE", { ISSUING_PAN_SEARCH_PER_MINUTE: "0" }],
    ["ISSUING_PAN_SEARCH_PER_MINUTE", { ISSUING_PAN_SEARCH_PER_MINUTE: "lots" }],
    ["ISSUING_PAN_SEARCH_MAX_MISSES", { ISSUING_PAN_SEARCH_MAX_MISSES: "0" }],
    ["ISSUING_PAN_SEARCH_MAX_MISSES", { ISSUING_PAN_SEARCH_MAX_MISSES: "2.5" }],
    ["ISSUING_WEBHOOK_RETRY_SCHEDULE", { ISSUING_WEBHOOK_RETRY_SCHEDULE: "5s,soon" }],
    ["ISSUING_WEBHOOK_TIMEOUT_MS", { ISSUING_WEBHOOK_TIMEOUT_MS: "0" }],
    ["ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS", { ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "perhaps" }],
    ["ISSUING_PG_NOTIFY", { ISSUING_DATABASE_URL: "postgres://db.internal/issuing", ISSUING_PG_NOTIFY: "maybe" }],
    [
      "ISSUING_DATABASE_LISTEN_URL",
      { ISSUING_DATABASE_URL: "postgres://db.internal/issuing", ISSUING_DATABASE_LISTEN_URL: "db.internal:5432" }
    ],
    ["ISSUING_DATABASE_LISTEN_URL", { ISSUING_DATABASE_LISTEN_URL: "postgres://hunter2@db.internal/issuing" }]
  ]

  it("takes the listening connection's URL and ISSUING_PG_NOTIFY on a PostgreSQL database", () => {
    const database = (env: Record<string, string>) =>
      Either.getOrThrow(loadConfig({ ISSUING_DATABASE_URL: "postgres://pool.internal:6432/issuing", ...env })).database
    expect(database({ ISSUING_DATABASE_LISTEN_URL: "postgres://db.internal:5432/issuing" })).toEqual({
      kind: "postgres",
      url: "postgres://pool.internal:6432/issuing",
      listenUrl: "postgres://db.internal:5432/issuing",
      notify: true
    })
    expect(database({ ISSUING_PG_NOTIFY: "OFF" })).toMatchObject({ notify: false })
    expect(database({ ISSUING_PG_NOTIFY: "on" })).toMatchObject({ notify: true })
  })
  it("reads the ISO 8583 host's address and refuses it off loopback without mutual TLS", () => {
    expect(Either.getOrThrow(loadConfig({})).iso8583).toBeUndefined()
    expect(Either.getOrThrow(loadConfig({ ISSUING_ISO8583_LISTEN: "127.0.0.1:8583" })).iso8583).toEqual({
      host: "127.0.0.1",
      port: 8583,
      organizationId: undefined,
      tls: undefined
    })
    expect(Either.getOrThrow(loadConfig({ ISSUING_ISO8583_LISTEN: "[::1]:0" })).iso8583).toMatchObject({ host: "::1", port: 0 })
    expect(problem({ ISSUING_ISO8583_LISTEN: "0.0.0.0:8583" })).toMatch(/ISSUING_ISO8583_LISTEN is off loopback.*ISSUING_ISO8583_TLS_CERT/)
    expect(problem({ ISSUING_ISO8583_LISTEN: "8583" })).toContain("ISSUING_ISO8583_LISTEN must be HOST:PORT")
    expect(problem({ ISSUING_ISO8583_LISTEN: "127.0.0.1:8583", ISSUING_ISO8583_TLS_CERT: "/etc/hosts" })).toContain("set together")
    expect(problem({ ISSUING_ISO8583_LISTEN: "127.0.0.1:8583", ISSUING_ISO8583_ORGANIZATION_ID: "acme" })).toContain(
      "ISSUING_ISO8583_ORGANIZATION_ID must be an organization id"
    )
    const files = { ISSUING_ISO8583_TLS_CERT: "/etc/hosts", ISSUING_ISO8583_TLS_KEY: "/etc/hosts", ISSUING_ISO8583_TLS_CA: "/nowhere.pem" }
    expect(problem({ ISSUING_ISO8583_LISTEN: "0.0.0.0:8583", ...files })).toContain("ISSUING_ISO8583_TLS_CA names no file")
    // A host app gets the same from configFromEnv, for startIso8583Host.
    const key = Buffer.alloc(32, 3).toString("base64")
    const hosted = configFromEnv({
      ISSUING_VAULT_KEY: key,
      ISSUING_ISO8583_LISTEN: "localhost:8583",
      ISSUING_DATABASE_URL: "sqlite::memory:"
    })
    expect(hosted.iso8583).toEqual({ host: "localhost", port: 8583, organizationId: undefined, tls: undefined })
  })
  it("takes a bootstrap API key of 32 characters or more, not shorter", () => {
    expect(Either.getOrThrow(loadConfig({ ISSUING_BOOTSTRAP_API_KEY: "k".repeat(32) })).bootstrapApiKey).toBe("k".repeat(32))
    expect(problem({ ISSUING_BOOTSTRAP_API_KEY: "k".repeat(31) })).toContain("ISSUING_BOOTSTRAP_API_KEY must be 32 to 256")
  })

  it.each(bad)("rejects a bad %s with one line naming it, without echoing secrets", (variable, env) => {
    const line = problem(env)
    expect(line).toContain(variable)
    expect(line.split("\n")).toHaveLength(1)
    expect(line).not.toContain("hunter2")
  })
})
