import { createIssuing, type IssuingInstance, storeFor } from "@issuing/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"
import { bootstrapOrganization } from "@issuing/http"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as oauth from "oauth4webapi"

const BASE = "https://api.example.com/issuing"

// createIssuing's web-standard handler, mounted under a prefix, on both stores.
describe.each(STORE_KINDS)("embedding with the web handler on %s", (kind) => {
  let database: TestDatabase
  let issuing: IssuingInstance
  let key: string
  let programId: string
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    issuing = await createIssuing({
      store: storeFor(kind === "sqlite" ? { kind, filename: database.filename! } : { kind, url: database.url }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: null,
      basePath: "/issuing/",
      settings: { baseUrl: BASE }
    })
    const created = (await bootstrapOrganization(issuing))!
    key = created.api_key
    programId = created.program_id
    // Bootstrap happens once: a second call finds the key and creates nothing.
    expect(await bootstrapOrganization(issuing)).toBeNull()
  })
  afterAll(async () => {
    await issuing?.dispose()
    await database?.drop()
  })

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await issuing.handler(
      new Request(`${BASE}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          "x-program-id": programId,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
      })
    )
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, body: text === "" ? undefined : JSON.parse(text) }
  }

  it("answers GET and POST under the mount path", async () => {
    const listed = await call("GET", "/v1/programs")
    expect(listed.status).toBe(200)
    expect(listed.body.data[0].id).toBe(programId)
    expect(listed.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const created = await call("POST", "/v1/programs", { name: "Through fetch" })
    expect(created.status).toBe(200)
    expect(created.body.name).toBe("Through fetch")
    const replayKey = crypto.randomUUID()
    const first = await call("POST", "/v1/programs", { name: "Idempotent" }, { "idempotency-key": replayKey })
    const again = await call("POST", "/v1/programs", { name: "Idempotent" }, { "idempotency-key": replayKey })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
  })

  it("builds doc_url from the mounted base URL, and serves the docs under it", async () => {
    const failed = await call("POST", "/v1/programs", { name: 7 })
    expect(failed.status).toBe(400)
    expect(failed.body.error.param).toBe("name")
    expect(failed.body.error.doc_url).toBe(`${BASE}/docs/errors/invalid_request`)
    const page = await issuing.handler(new Request(`${BASE}/docs/errors/invalid_request`))
    expect(page.status).toBe(200)
    const openapi = await issuing.handler(new Request(`${BASE}/openapi.json`))
    expect((await openapi.json()).openapi).toMatch(/^3\.1/)
  })

  it("bounds web request bodies too (413), and rejects malformed JSON (400)", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) })
    const tooLarge = await issuing.handler(
      new Request(`${BASE}/v1/programs`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        // A stream has no declared length: the limit must hold while reading.
        body: new Blob([big]).stream(),
        // @ts-expect-error Node's fetch needs duplex for a streamed body.
        duplex: "half"
      })
    )
    expect(tooLarge.status).toBe(413)
    expect((await tooLarge.json()).error.code).toBe("request_too_large")
    const malformed = await call("POST", "/v1/programs", "{nope")
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe("invalid_request")
  })

  it("puts embed_url under the mounted base URL", async () => {
    const wallet = await call("POST", "/v1/wallets", { holder: { name: "Ada Lovelace" } })
    expect(wallet.status, wallet.text).toBe(200)
    const card = await call("POST", "/v1/cards", { wallet_id: wallet.body.id, type: "VIRTUAL" })
    expect(card.status, card.text).toBe(200)
    const session = await call("POST", `/v1/cards/${card.body.id}/embed-sessions`, {})
    expect(session.status, session.text).toBe(200)
    expect(session.body.embed_url.startsWith(`${BASE}/v1/cards/embed?session_token=`)).toBe(true)
    const document = await issuing.handler(new Request(session.body.embed_url))
    expect(document.status).toBe(200)
  })

  it("answers OAuth discovery at the RFC 8414 path-inserted address of the mounted issuer (oauth4webapi)", async () => {
    const issuer = new URL(BASE)
    const asked: Array<string> = []
    const response = await oauth.discoveryRequest(issuer, {
      algorithm: "oauth2",
      [oauth.customFetch]: (url, options) => {
        asked.push(url)
        return issuing.handler(new Request(url, options as RequestInit))
      }
    })
    expect(asked).toEqual(["https://api.example.com/.well-known/oauth-authorization-server/issuing"])
    const metadata = await oauth.processDiscoveryResponse(issuer, response)
    expect(metadata.issuer).toBe(BASE)
    expect(metadata.token_endpoint).toBe(`${BASE}/oauth/token`)
    // Only the mount's own name is inserted: another path stays the host's.
    expect((await issuing.handler(new Request("https://api.example.com/.well-known/oauth-authorization-server/other"))).status).toBe(404)
  })
})

// The node:http listener under a mount path, over a real socket.
describe("embedding with the node listener under a mount path", () => {
  it("answers /v1 under the mount and OAuth discovery at the path-inserted address (oauth4webapi)", async () => {
    const database = await createTestDatabase("sqlite", { migrated: true })
    let issuing: IssuingInstance | undefined
    const server = http.createServer((request, response) => {
      if (issuing === undefined) return void response.writeHead(503).end()
      const url = request.url ?? "/"
      // The host routes its mount and the mount's metadata address to the platform.
      if (url.startsWith("/issuing") || url.startsWith("/.well-known/oauth-authorization-server/issuing")) {
        return issuing.listener(request, response)
      }
      response.writeHead(404).end("host")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/issuing`
    try {
      issuing = await createIssuing({
        store: storeFor({ kind: "sqlite", filename: database.filename! }),
        vaultKeys: [TEST_VAULT_KEY],
        background: false,
        log: null,
        basePath: "/issuing",
        settings: { baseUrl: base }
      })
      const issuer = new URL(base)
      const response = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", [oauth.allowInsecureRequests]: true })
      const metadata = await oauth.processDiscoveryResponse(issuer, response)
      expect(metadata.issuer).toBe(base)
      expect((await fetch(`${base}/v1/programs`)).status).toBe(401)
      expect((await fetch(`${base}?x=1`)).status).toBe(404)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await issuing?.dispose()
      await database.drop()
    }
  })
})
