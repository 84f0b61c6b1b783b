import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HOST_AUTHORIZATION_LIMIT, MOUNT_PATH, startHostApp } from "../server.js"

// The embedding story end to end: a plain node:http app with its own routes mounts the platform.
describe("examples/host-app", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-host-app-"))
  let app: { url: string; organization: { api_key: string; program_id: string }; close: () => Promise<void> }
  beforeAll(async () => {
    app = await startHostApp({ port: 0, databaseFile: path.join(dir, "host.db"), vaultKeys: [Buffer.alloc(32, 3)] })
  })
  afterAll(async () => {
    await app?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("serves the host's own routes", async () => {
    const health = await fetch(`${app.url}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok", service: "host-app" })
    const home = await fetch(`${app.url}/`)
    expect(await home.text()).toContain("Host app")
    // The host's 404 is its own, not the platform's envelope.
    const missing = await fetch(`${app.url}/v1/programs`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ host_error: "no such page" })
  })

  it("serves the platform's /v1 under the mount path", async () => {
    expect(MOUNT_PATH).toBe("/issuing")
    const auth = { authorization: `Bearer ${app.organization.api_key}` }
    const listed = await fetch(`${app.url}/issuing/v1/programs`, { headers: auth })
    expect(listed.status).toBe(200)
    const body = await listed.json()
    expect(body.data.map((program: { id: string }) => program.id)).toEqual([app.organization.program_id])

    // The query string reaches the platform through the mount: an unknown parameter is its 400.
    const unknown = await fetch(`${app.url}/issuing/v1/programs?x=1`, { headers: auth })
    expect(unknown.status).toBe(400)
    expect((await unknown.json()).error.param).toBe("x")
    const created = await fetch(`${app.url}/issuing/v1/programs`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
      body: JSON.stringify({ name: "Mounted", bin: "411111" })
    })
    expect(created.status).toBe(200)
    expect((await created.json()).bin).toBe("411111")
  })

  it("points doc_url into the mount path, where the page is served", async () => {
    const failed = await fetch(`${app.url}/issuing/v1/programs`)
    expect(failed.status).toBe(401)
    const { error } = await failed.json()
    expect(error.doc_url).toBe(`${app.url}/issuing/docs/errors/authentication_error`)
    expect((await fetch(error.doc_url)).status).toBe(200)
    const unknown = await fetch(`${app.url}/issuing/v1/nothing`)
    expect(unknown.status).toBe(404)
    expect((await unknown.json()).error.code).toBe("not_found")
    const openapi = await fetch(`${app.url}/issuing/openapi.json`)
    expect((await openapi.json()).openapi).toMatch(/^3\.1/)
  })

  it("decides card authorizations in-process with its authorizationDecider", async () => {
    const headers = {
      authorization: `Bearer ${app.organization.api_key}`,
      "x-program-id": app.organization.program_id,
      "content-type": "application/json"
    }
    const post = async (route: string, body: unknown) =>
      (await fetch(`${app.url}${MOUNT_PATH}${route}`, { method: "POST", headers, body: JSON.stringify(body) })).json()
    const wallet = await post("/v1/wallets", { holder: { name: "Host customer" } })
    await post("/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: 1_000_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await post("/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const within = await post("/v1/simulate/authorizations", { card_id: card.id, amount: HOST_AUTHORIZATION_LIMIT, mcc: "5411" })
    expect(within).toMatchObject({ status: "PENDING", request_history: [{ approved: true, reason: "webhook_approved" }] })
    const over = await post("/v1/simulate/authorizations", { card_id: card.id, amount: HOST_AUTHORIZATION_LIMIT + 1, mcc: "5411" })
    expect(over).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
  })
})
