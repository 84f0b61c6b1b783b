import { Access, runDeliveryWorker } from "@issuing/core"
import { createIssuing, type IssuingInstance, storeFor } from "@issuing/http"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import type { BrowserContext, FrameLocator, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chromiumAvailable, launchChromium } from "../support/chromium.js"
import { ROOT } from "../support/cli.js"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

const available = chromiumAvailable("webhook portal")

/** Where the screenshots a person looks at go (gitignored). */
const SCREENSHOTS = path.join(ROOT, "test/screenshots")

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * The endpoint portal in real headless Chromium, as docs/webhooks.md#the-endpoint-portal tells a
 * program to embed it: the platform mounted under a host app's path (`/issuing`), the program's page
 * on another origin framing the portal URL with `sandbox="allow-scripts allow-same-origin"`.
 */
describe.runIf(available)("webhook endpoint portal in real headless Chromium", () => {
  let database: TestDatabase
  let issuing: IssuingInstance
  let platformServer: http.Server
  let hostServer: http.Server
  let base: string
  let hostUrl: string
  let receiver: Receiver
  let context: BrowserContext
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  let worker: Fiber.RuntimeFiber<unknown, unknown>
  let api: (method: string, path: string, body?: unknown) => Promise<any>
  let portalUrl = ""
  let apiKey = ""

  beforeAll(async () => {
    database = await createTestDatabase("sqlite", { migrated: true })
    receiver = await startReceiver()
    platformServer = http.createServer((request, response) => {
      if ((request.url ?? "").startsWith("/issuing")) return issuing.listener(request, response)
      response.writeHead(404).end("host app")
    })
    base = `${await listen(platformServer)}/issuing`
    issuing = await createIssuing({
      store: storeFor({ kind: "sqlite", filename: database.filename! }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: null,
      basePath: "/issuing",
      settings: { baseUrl: base, webhookStorePrivateResponseBodies: true }
    })
    worker = issuing.runtime.runFork(runDeliveryWorker())
    const org = await issuing.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("Portal host")))
    apiKey = org.api_key
    api = async (method, route, body) => {
      const response = await fetch(`${base}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${org.api_key}`,
          "x-program-id": org.program_id,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      const parsed = await response.json()
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`)
      return parsed
    }
    // The program's page: its own origin, framing the portal URL its back end asked for.
    hostServer = http.createServer((_request, response) => {
      const platformOrigin = new URL(base).origin
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'self'; style-src 'unsafe-inline'; frame-src ${platformOrigin}`
      })
      response.end(
        `<!doctype html><html><head><title>Acme: your webhooks</title></head><body style="margin:0;font-family:sans-serif">` +
          `<h1 style="font-size:16px;margin:8px">Acme settings: webhooks</h1>` +
          `<iframe id="portal" title="Webhook endpoints" src="${portalUrl}" sandbox="allow-scripts allow-same-origin" ` +
          `referrerpolicy="no-referrer" style="width:100%;height:900px;border:1px solid #ccc"></iframe></body></html>`
      )
    })
    hostUrl = await listen(hostServer)
    browser = await launchChromium({ width: 1100, height: 1000 })
    context = browser.context
    fs.mkdirSync(SCREENSHOTS, { recursive: true })
  })

  afterAll(async () => {
    await browser?.close()
    if (worker !== undefined) await issuing.runtime.runPromise(Fiber.interrupt(worker))
    await new Promise<void>((resolve) => (hostServer ? hostServer.close(() => resolve()) : resolve()))
    platformServer?.closeAllConnections()
    await new Promise<void>((resolve) => (platformServer ? platformServer.close(() => resolve()) : resolve()))
    await receiver?.close()
    await issuing?.dispose()
    await database?.drop()
  })

  const rows = (frame: FrameLocator) => frame.locator("#endpoints tr[data-id]")

  it("adds an endpoint, sees the attempts of a test event and of a replay, and never another tag's endpoint", async () => {
    const theirs = await api("POST", "/v1/webhook-subscriptions", {
      url: `${receiver.url}/other-customer`,
      event_types: ["wallet.created"],
      tag: "customer-2"
    })
    const session = await api("POST", "/v1/webhook-portal-sessions", {
      scope_tag: "customer-1",
      allowed_event_types: ["wallet.created", "card.created"]
    })
    portalUrl = session.url
    expect(portalUrl.startsWith(`${base}/v1/webhook-portal?session_token=`)).toBe(true)

    const page: Page = await context.newPage()
    const consoleErrors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    await page.goto(hostUrl)
    const frame = page.frameLocator("#portal")
    await frame.getByText("No endpoints yet.").waitFor()
    // Only the allowed event types are offered.
    expect(await frame.locator("#types input").evaluateAll((boxes) => boxes.map((box) => (box as HTMLInputElement).value))).toEqual([
      "wallet.created",
      "card.created"
    ])
    // The host page cannot read the cross-origin portal.
    expect(await page.evaluate(() => (document.getElementById("portal") as HTMLIFrameElement).contentDocument)).toBeNull()

    await frame.locator("#url").fill(`${receiver.url}/customer-1`)
    await frame.locator("#description").fill("Orders service")
    await frame.getByLabel("wallet.created").check()
    await frame.getByRole("button", { name: "Add endpoint" }).click()
    await frame.locator("#secret code").waitFor()
    expect(await frame.locator("#secret code").textContent()).toMatch(/^whsec_/)
    await rows(frame).first().waitFor()
    expect(await rows(frame).count()).toBe(1)
    expect(await frame.locator("#endpoints").textContent()).toContain(`${receiver.url}/customer-1`)
    expect(await frame.locator("#endpoints").textContent()).not.toContain("other-customer")
    const mine = (await api("GET", "/v1/webhook-subscriptions?tag=customer-1")).data
    expect(mine.map((s: any) => s.url)).toEqual([`${receiver.url}/customer-1`])
    await page.screenshot({ path: path.join(SCREENSHOTS, "webhook-portal-added.png"), fullPage: true })

    // Send a test event: its attempt is listed.
    await frame.getByRole("button", { name: "Send test event" }).click()
    await frame.getByText("Test event sent: SUCCESS (200).").waitFor()
    await frame.locator("#attempts tr.attempt").first().waitFor()
    expect(await frame.locator("#attempts tr.attempt").count()).toBe(1)
    expect(await frame.locator("#attempts .status-SUCCESS").count()).toBe(1)

    // The customer's wallet's event is delivered by the worker; a replay of the window queues it
    // again. Another customer's endpoint never receives it (docs/webhooks.md#customers-and-tags).
    const before = receiver.received.length
    const wallet = await api("POST", "/v1/wallets", { holder: { name: "Ada" }, tag: "customer-1" })
    await receiver.waitFor((all) => all.slice(before).some((r) => r.body.includes(wallet.id)))
    await frame.getByRole("button", { name: "Attempts" }).click()
    await frame.locator("#replay-end").fill(new Date(Date.now() + 60_000).toISOString())
    await frame.getByRole("button", { name: "Replay" }).click()
    await frame.getByText(/^Replay queued \d+ event\(s\) for/).waitFor()
    await receiver.waitFor((all) => all.slice(before).filter((r) => r.body.includes(wallet.id)).length >= 2)
    // The replayed delivery's attempt is recorded after the answer: reload the list until it shows.
    const deadline = Date.now() + 20_000
    while ((await frame.locator("#attempts tr.attempt").count()) < 3) {
      if (Date.now() > deadline) throw new Error("The replay's attempt never showed in the portal")
      await frame.getByRole("button", { name: "Attempts" }).click()
      await page.waitForTimeout(200)
    }
    await page.screenshot({ path: path.join(SCREENSHOTS, "webhook-portal-attempts.png"), fullPage: true })

    // The other customer's endpoint was never shown, touched or sent this customer's event, and
    // the portal page holds no key.
    expect(await frame.locator("#endpoints").textContent()).not.toContain("other-customer")
    expect(receiver.received.filter((r) => r.path.endsWith("/other-customer") && r.body.includes(wallet.id))).toEqual([])
    expect(await api("GET", `/v1/webhook-subscriptions/${theirs.id}`)).toMatchObject({ tag: "customer-2", disabled: false })
    const html = await frame.locator("html").innerHTML()
    expect(html).not.toContain(apiKey)
    expect(consoleErrors).toEqual([])
  })
})
