import { Access, type IssuingSettings, type NewOrganization } from "@issuing/core"
import { createIssuing, type IssuingInstance, storeFor } from "@issuing/http"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { createTestDatabase, type StoreKind, type TestDatabase } from "./databases.js"

/** A response as tests see it. */
export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface RequestOptions {
  /** API key secret; sent as a bearer token. */
  readonly key?: string | undefined
  /** X-Program-ID; the organization's default program unless null. */
  readonly program?: string | null | undefined
  readonly body?: unknown
  /** Raw body text, sent as is. */
  readonly rawBody?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly idempotencyKey?: string | undefined
}

/** A platform served on a loopback port over a fresh database, with one organization ready. */
export interface TestPlatform {
  readonly kind: StoreKind
  readonly baseUrl: string
  readonly database: TestDatabase
  readonly instance: IssuingInstance
  /** The first organization: its id, default program and admin key (PAN reveal enabled). */
  readonly org: NewOrganization
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>
  /** Another organization with its own program and admin key. */
  readonly createOrganization: (name?: string) => Promise<NewOrganization>
  readonly close: () => Promise<void>
}

/** A fixed vault key for tests (never used outside them). */
export const TEST_VAULT_KEY = Buffer.alloc(32, 7)

/** A platform served on a loopback port over an existing database. */
export interface ServedPlatform {
  readonly baseUrl: string
  readonly instance: IssuingInstance
  readonly close: () => Promise<void>
}

/**
 * A request as `platform`'s first organization to `clock` 0 (the platform itself) or to
 * `served[clock - 1]` (another server over its database, e.g. with a clock offset): the status,
 * the body's text and the parsed body.
 */
export const requestAtClock = async (
  platform: TestPlatform,
  served: ReadonlyArray<ServedPlatform>,
  clock: number,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; text: string; body: any }> => {
  if (clock === 0) return platform.request(method, path, { body })
  const response = await fetch(`${served[clock - 1]!.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${platform.org.api_key}`,
      "x-program-id": platform.org.program_id,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text) }
}

/** Serves the platform over `database` with the given vault keys (several processes, key rotation). */
export const servePlatform = async (
  database: TestDatabase,
  vaultKeys: ReadonlyArray<Buffer> = [TEST_VAULT_KEY],
  settings: Partial<IssuingSettings> = {},
  options: { readonly clockOffsetMs?: number } = {}
): Promise<ServedPlatform> => {
  // Keep-alive longer than any test idles a connection between requests, however loaded the machine.
  // A server closing an idle connection races the client reusing it: fetch's own idle limit is the
  // server's advertised timeout less a second, and when a synchronous stretch of the test (the
  // OpenAPI examples' validation, seconds under load) spans both expiries, the next request goes
  // out on the connection before either timer runs, and the server's then closes it under the
  // request ("fetch failed", seen once after a 65 s idle behind the generators' compile). Ten
  // minutes is longer than any file; close() ends every connection.
  const server = http.createServer({ keepAliveTimeout: 600_000 })
  // A backlog above Node's 511: the fuzz suite opens a connection per route × junk id at once
  // (over 1,200), and a full accept queue under load answers some with a reset.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, resolve))
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const instance = await createIssuing({
    store: storeFor(
      database.kind === "sqlite" ? { kind: "sqlite", filename: database.filename! } : { kind: "postgres", url: database.url }
    ),
    vaultKeys,
    // Test receivers run on loopback: keep their bodies (a served platform keeps only their status).
    settings: { baseUrl, webhookStorePrivateResponseBodies: true, ...settings },
    // Tests start the delivery worker themselves where they want one (test/webhooks/deliveries.ts).
    background: false,
    log: null,
    clockOffsetMs: options.clockOffsetMs
  })
  server.on("request", instance.listener)
  server.on("connect", instance.connectListener)
  return {
    baseUrl,
    instance,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await instance.dispose()
    }
  }
}

/** Starts a platform on a fresh database of the given kind. */
export const startPlatform = async (kind: StoreKind, settings: Partial<IssuingSettings> = {}): Promise<TestPlatform> => {
  const database = await createTestDatabase(kind, { migrated: true })
  const { baseUrl, close, instance } = await servePlatform(database, [TEST_VAULT_KEY], {
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    oauthRateLimitPerSecond: 100_000,
    oauthRateLimitBurst: 100_000,
    ...settings
  })
  const createOrganization = (name = "Test organization") =>
    instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization(name)))
  const org = await createOrganization()

  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...options.headers }
    const key = "key" in options ? options.key : org.api_key
    if (key !== undefined) headers.authorization = `Bearer ${key}`
    const program = "program" in options ? options.program : org.program_id
    if (program !== null && program !== undefined) headers["x-program-id"] = program
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
    let body: string | undefined
    if (options.rawBody !== undefined) body = options.rawBody
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] ??= "application/json"
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body })
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  }

  return {
    kind,
    baseUrl,
    database,
    instance,
    org,
    request,
    createOrganization,
    close: async () => {
      await close()
      await database.drop()
    }
  }
}

/** A random UUID (idempotency keys, unknown ids). */
export const uuid = (): string => crypto.randomUUID()

/** Asserts the error envelope (docs/api.md#errors) and returns its error object. */
export const expectEnvelope = (
  response: TestResponse,
  status: number,
  expected: { type?: string; code?: string; param?: string | null } = {}
) => {
  if (response.status !== status) {
    throw new Error(`Expected status ${status}, got ${response.status}: ${response.text}`)
  }
  const error = response.body?.error
  if (error === undefined) throw new Error(`Expected an error envelope, got: ${response.text}`)
  const keys = Object.keys(error).sort()
  const wanted = ["code", "doc_url", "message", "param", "request_id", "type"]
  if (JSON.stringify(keys) !== JSON.stringify(wanted)) throw new Error(`Envelope fields ${keys.join(",")}`)
  if (typeof error.message !== "string" || error.message.length === 0) throw new Error("Envelope message empty")
  if (!/^[0-9a-f-]{36}$/.test(error.request_id)) throw new Error(`Bad request_id ${error.request_id}`)
  if (response.headers.get("request-id") !== error.request_id) throw new Error("Request-Id header differs from body")
  if (!String(error.doc_url).endsWith(`/docs/errors/${error.code}`)) throw new Error(`Bad doc_url ${error.doc_url}`)
  if (expected.type !== undefined && error.type !== expected.type) throw new Error(`type ${error.type} != ${expected.type}`)
  if (expected.code !== undefined && error.code !== expected.code) throw new Error(`code ${error.code} != ${expected.code}`)
  if ("param" in expected && error.param !== expected.param) {
    throw new Error(`param ${JSON.stringify(error.param)} != ${JSON.stringify(expected.param)}`)
  }
  return error as { type: string; code: string; message: string; param: string | null; request_id: string; doc_url: string }
}
