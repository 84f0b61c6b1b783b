import { loadConfig } from "@issuing/http"
import { Either } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

// docs/webhooks.md#ssrf-guard: a sandbox is no proxy into its own network. Private targets are
// allowed by default only when the server listens on loopback only, and the body of a private
// target's answer is never stored, only its status.
describe("ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS default", () => {
  const allowPrivate = (env: Record<string, string>) =>
    Either.getOrThrow(loadConfig({ ISSUING_VAULT_KEY: Buffer.alloc(32, 1).toString("base64"), ...env }, "/srv/app")).settings
      .webhookAllowPrivateUrls

  it("is true in sandbox only when the server listens on loopback only", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1"]) {
      expect(allowPrivate({ ISSUING_HOST: host }), host).toBe(true)
    }
    expect(allowPrivate({})).toBe(true)
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.2", "api.example.com", "fe80::1"]) {
      expect(allowPrivate({ ISSUING_HOST: host }), host).toBe(false)
    }
    expect(allowPrivate({ ISSUING_ENVIRONMENT: "production" })).toBe(false)
  })

  it("still follows the variable when it is set", () => {
    expect(allowPrivate({ ISSUING_HOST: "0.0.0.0", ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "true" })).toBe(true)
    expect(allowPrivate({ ISSUING_HOST: "127.0.0.1", ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "false" })).toBe(false)
  })
})

describe.each(STORE_KINDS)("a private webhook target's answer on %s", (kind) => {
  const SECRET = "internal-admin: root password is hunter2"
  let server: http.Server
  let platform: TestPlatform
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(request.url === "/fail" ? 500 : 200).end(SECRET))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    // As `issuing serve` runs: private targets allowed (sandbox on loopback), their bodies not kept.
    platform = await startPlatform(kind, { webhookAllowPrivateUrls: true, webhookStorePrivateResponseBodies: false })
  })
  afterAll(async () => {
    await platform?.close()
    await new Promise((resolve) => server.close(resolve))
  })

  it("is recorded by its status only: no key reads the internal service's answer", async () => {
    const developer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "dev", role: "developer" } })
    const viewer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "viewer", role: "viewer" } })
    const port = (server.address() as AddressInfo).port
    for (const [path, status, code] of [
      ["/internal-admin", "SUCCESS", 200],
      ["/fail", "FAILED", 500]
    ] as const) {
      const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
        key: developer.body.secret,
        body: { url: `http://127.0.0.1:${port}${path}`, event_types: ["wallet.created"] }
      })
      expect(subscription.status, subscription.text).toBe(200)
      await platform.request("POST", "/v1/wallets", { key: developer.body.secret, body: { holder: { name: "Ada" } } })
      const events = await platform.request("GET", "/v1/events?type=wallet.created&page_size=1")
      const resent = await platform.request("POST", `/v1/events/${events.body.data[0].id}/resend`, {
        key: developer.body.secret,
        body: { subscription_id: subscription.body.id }
      })
      expect(resent.status, resent.text).toBe(200)
      expect(resent.body.data[0]).toMatchObject({ status, response_code: code })
      const attempts = await platform.request("GET", `/v1/webhook-attempts?webhook_subscription_id=${subscription.body.id}`, {
        key: viewer.body.secret
      })
      expect(attempts.body.data.length).toBeGreaterThan(0)
      for (const attempt of [...resent.body.data, ...attempts.body.data]) {
        expect(attempt.response_code).toBe(code)
        expect(attempt.response_body).not.toContain("hunter2")
        expect(attempt.response_body).toMatch(/not stored/)
      }
    }
  })
})
