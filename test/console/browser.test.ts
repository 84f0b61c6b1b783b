import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MOUNT_PATH, startHostApp } from "../../examples/host-app/server.js"
import { createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { chromiumAvailable, launchChromium } from "../support/chromium.js"
import { ROOT } from "../support/cli.js"
import { STORE_KINDS } from "../support/databases.js"
import { startDecisionReceiver } from "../support/decisionReceiver.js"
import { type DeliveryFixture, startDeliveries } from "../webhooks/deliveries.js"

const available = chromiumAvailable("console")

/** Where the screenshots go, for a person to look at (gitignored: each run makes them anew). */
const SCREENSHOTS = path.join(ROOT, "test", "screenshots")

const ok = <T = any>(response: { status: number; text: string; body: T }): T => {
  expect(response.status, response.text).toBe(200)
  return response.body
}

describe.runIf(available)("the console in real headless Chromium", () => {
  let context: BrowserContext
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined

  beforeAll(async () => {
    browser = await launchChromium({ width: 1180, height: 900 })
    context = browser.context
    fs.mkdirSync(SCREENSHOTS, { recursive: true })
  })

  afterAll(async () => {
    await browser?.close()
  })

  it("works under a host app's mount path: its assets and the API are found under it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-console-host-"))
    const host = await startHostApp({ port: 0, databaseFile: path.join(dir, "host.db"), vaultKeys: [Buffer.alloc(32, 5)] })
    const page = await context.newPage()
    try {
      const requested: Array<string> = []
      page.on("request", (request) => requested.push(new URL(request.url()).pathname))
      await page.goto(`${host.url}${MOUNT_PATH}/console`)
      await page.getByLabel("API key or access token").fill(host.organization.api_key)
      await page.getByLabel("API key or access token").press("Enter")
      await page.getByRole("heading", { name: "Wallets" }).waitFor()
      expect(await page.locator("#program").inputValue()).toBe(host.organization.program_id)
      await expect.poll(() => page.locator(".pager [role=status]").textContent()).toBe("This program has no wallets yet.")
      // Everything the page asked for went through the mount path, nothing to the host's own routes.
      expect(requested.length).toBeGreaterThan(3)
      expect(requested.filter((pathname) => !pathname.startsWith(`${MOUNT_PATH}/`))).toEqual([])
      expect(requested).toContain(`${MOUNT_PATH}/console/console.js`)
      expect(requested).toContain(`${MOUNT_PATH}/v1/wallets`)
    } finally {
      await page.close()
      await host.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  describe.each(STORE_KINDS)("on %s", (kind) => {
    let fixture: DeliveryFixture
    let page: Page
    let card: { id: string; last_four: string }
    let transaction: { id: string }
    let subscription: { id: string }
    /** What the browser reported against the page's Content-Security-Policy. */
    const violations: Array<string> = []
    const shot = (name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `console-${kind}-${name}.png`), fullPage: true })

    beforeAll(async () => {
      fixture = await startDeliveries(kind)
      const { platform, receiver } = fixture
      subscription = ok(
        await platform.request("POST", "/v1/webhook-subscriptions", {
          body: { url: receiver.url, event_types: ["card.updated", "transaction.updated"], description: "Console test" }
        })
      )
      const wallet = await createWallet(platform)
      await fund(platform, wallet.financial_account_id, 10_000)
      await fund(platform, wallet.financial_account_id, 4_000)
      card = await issueCard(platform, wallet.id)
      // The program approves 25.00 of the 30.00 asked (a partial approval, 10); an increment over the funds declines (51).
      const decisions = await startDecisionReceiver()
      const endpoint = ok(await platform.request("POST", "/v1/authorization-endpoints", { body: { url: decisions.url("/amount/2500") } }))
      try {
        transaction = ok(
          await platform.request("POST", "/v1/simulate/authorizations", {
            body: {
              card_id: card.id,
              amount: 3_000,
              partial_approval_capable: true,
              merchant: { acceptor_id: "ACQ-000123", name: "Corner Grocery", city: "Springfield", country: "US", mcc: "5411" }
            }
          })
        )
      } finally {
        ok(await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint.id}`))
        decisions.close()
      }
      ok(await platform.request("POST", `/v1/simulate/transactions/${transaction.id}/increment`, { body: { amount: 20_000 } }))
      ok(await platform.request("POST", `/v1/simulate/transactions/${transaction.id}/clearing`, { body: { amount: 2_700 } }))
      page = await context.newPage()
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
      })
    })

    afterAll(async () => {
      await page?.close()
      await fixture?.stop()
    })

    it("is served under a strict policy and signs in through a password field with Enter, onto the key's first program", async () => {
      const { platform } = fixture
      const served = (await page.goto(`${platform.baseUrl}/console`))!
      expect(served.status()).toBe(200)
      const policy = served.headers()["content-security-policy"]!
      expect(policy).toContain("default-src 'none'")
      expect(policy).toContain("script-src 'self'")
      expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:\/\/(?!127\.0\.0\.1)/)
      const field = page.getByLabel("API key or access token")
      expect(await field.getAttribute("type")).toBe("password")
      await shot("sign-in")

      // A refused key is shown as the API's error, and nothing is kept.
      await field.fill("sk_sandbox_not_a_key")
      await field.press("Enter")
      await expect.poll(() => page.locator("[role=alert]").textContent()).toContain("401 authentication_error")

      await field.fill(platform.org.api_key)
      await field.press("Enter")
      await page.getByRole("heading", { name: "Wallets" }).waitFor()
      expect(await page.locator("#program").inputValue()).toBe(platform.org.program_id)
      // Kept for this tab only: not in a cookie, not in the URL.
      expect(await context.cookies()).toEqual([])
      expect(page.url()).not.toContain(platform.org.api_key)
      expect(await page.evaluate(() => sessionStorage.getItem("issuing.console.credential"))).toBe(platform.org.api_key)
      // The wallet list shows the three balances: 14,000 credited, 2,700 cleared.
      await expect.poll(() => page.locator("table tbody tr").first().textContent()).toContain("113.00 USD")
    })

    it("shows a wallet's balances and its balance over time", async () => {
      await page.getByRole("link", { name: "Wallet of Ada Lovelace" }).click()
      await page.locator("svg.chart path.chart-line").waitFor()
      expect(await page.locator("[data-balance=posted]").textContent()).toBe("113.00 USD")
      expect(await page.locator("[data-balance=available]").textContent()).toBe("113.00 USD")
      // One point per posting of the wallet's account: two credits, the authorization and the clearing's excess.
      const points = await page.locator("svg.chart circle.chart-point").count()
      const postings = ok(
        await fixture.platform.request("GET", `/v1/financial-accounts/${(await walletAccount()).id}/book-transfers?page_size=100`)
      )
      expect(points).toBe(postings.data.length)
      expect(await page.locator("svg.chart desc").textContent()).toContain("to 113.00 USD")
      await shot("wallet")
    })

    const walletAccount = async () =>
      ok(await fixture.platform.request("GET", "/v1/financial-accounts?kind=wallet")).data[0] as { id: string }

    it("opens the secure card display in a sandboxed frame, then freezes the card and shows it frozen", async () => {
      const { platform } = fixture
      await page.getByRole("link", { name: "Cards" }).click()
      await page.getByRole("link", { name: `Card ending ${card.last_four}` }).click()
      await page.getByRole("button", { name: "Show card details" }).click()
      const iframe = page.locator(".card-display iframe")
      await iframe.waitFor()
      expect(await iframe.getAttribute("sandbox")).toBe("allow-scripts")
      expect(await iframe.getAttribute("referrerpolicy")).toBe("no-referrer")
      expect(await iframe.getAttribute("src")).toMatch(new RegExp(`^${platform.baseUrl}/v1/cards/embed\\?session_token=[A-Za-z0-9_-]{43}$`))
      const secrets = await reveal(platform, card.id)
      const grouped = secrets.pan.replace(/(\d{4})(?=\d)/g, "$1 ")
      await expect.poll(() => page.frameLocator(".card-display iframe").locator("#pan").textContent()).toBe(grouped)
      // The console's own document never holds the number, and cannot read the frame's.
      const parent = await page.evaluate(() => {
        const frame = document.querySelector(".card-display iframe") as HTMLIFrameElement
        return { html: document.documentElement.outerHTML, frameDocument: frame.contentDocument === null }
      })
      expect(parent.frameDocument).toBe(true)
      expect(parent.html).not.toContain(secrets.pan)
      expect(parent.html).not.toContain(grouped)
      await shot("card-display")

      await page.getByRole("button", { name: "Freeze" }).click()
      await expect.poll(() => page.locator("[data-field=state]").textContent()).toBe("FROZEN")
      expect(ok(await platform.request("GET", `/v1/cards/${card.id}`)).state).toBe("FROZEN")
      expect(await page.getByRole("button", { name: "Unfreeze" }).isVisible()).toBe(true)
      await shot("card-frozen")

      // A spend-control edit goes through PATCH, and a refused one shows the API's error and param.
      await page.getByLabel("Blocked MCCs").fill("5411, 12")
      await page.getByRole("button", { name: "Save controls" }).click()
      await expect.poll(() => page.locator("[role=alert]").first().textContent()).toContain("400 invalid_request")
      await page.getByLabel("Blocked MCCs").fill("5411, 7995")
      await page.getByRole("button", { name: "Save controls" }).click()
      await expect.poll(async () => ok(await platform.request("GET", `/v1/cards/${card.id}`)).blocked_mcc_codes).toEqual(["5411", "7995"])
      await expect.poll(() => page.locator(".fields").textContent()).toContain("5411, 7995")
    })

    it("follows a card transaction's timeline, with its book transfers and entries", async () => {
      await page.getByRole("link", { name: `Transaction ${transaction.id}` }).click()
      await page.locator("ol.timeline").waitFor()
      const types = await page.locator("ol.timeline li").evaluateAll((items) => items.map((item) => item.getAttribute("data-event-type")))
      expect(types).toEqual(["AUTHORIZATION", "INCREMENTAL_AUTHORIZATION", "CLEARING"])
      // The merchant object the authorization named, in the timeline above its messages.
      expect(await page.locator(".card-timeline [data-field=merchant]").textContent()).toBe(
        "Corner Grocery · Springfield, US · MCC 5411 · acceptor ACQ-000123"
      )
      expect(await page.locator("ol.timeline li").first().textContent()).toMatch(
        /^Authorization 25\.00 USD · APPROVED · response code 10 · /
      )
      // Each message's ISO 8583 response code, as the API gives it: the partial approval, the funds decline, the clearing.
      const codes = await page.locator("ol.timeline li [data-field=response-code] code").allTextContents()
      expect(codes).toEqual(["10", "51", "00"])
      expect(await page.locator("ol.timeline li.declined").textContent()).toContain("response code 51 INSUFFICIENT_FUNDS")
      expect(await page.locator("[data-field=status]").textContent()).toBe("SETTLED")
      // The card by its last four digits, not its id.
      expect(await page.getByRole("link", { name: `Card ${card.id}` }).textContent()).toBe(`•••• ${card.last_four}`)
      const bookTransfers = ok(await fixture.platform.request("GET", `/v1/transactions/${transaction.id}/book-transfers`))
      await expect
        .poll(() => page.locator("table").filter({ hasText: "Book transfers of this transaction" }).locator("tbody tr").count())
        .toBe(bookTransfers.data.length)
      expect(await page.locator(".entries li").first().textContent()).toMatch(/^(DEBIT|CREDIT) /)
      await shot("transaction")
    })

    it("replays a window for a subscription and shows the new attempts", async () => {
      const { platform, receiver } = fixture
      // The deliveries of the seeded events come first.
      const attemptsNow = async () =>
        ok(await platform.request("GET", `/v1/webhook-attempts?webhook_subscription_id=${subscription.id}`)).total_count as number
      await expect.poll(attemptsNow, { timeout: 20_000 }).toBeGreaterThan(0)
      await receiver.waitFor((received) => received.length > 0)
      const before = await attemptsNow()

      await page.getByRole("link", { name: "Webhooks" }).click()
      await page.getByRole("link", { name: `Subscription ${receiver.url}` }).click()
      await page.getByRole("button", { name: "Replay window" }).click()
      const replayed = page.locator("[data-replayed]")
      await replayed.waitFor()
      const queued = Number(await replayed.getAttribute("data-replayed"))
      expect(queued).toBeGreaterThan(0)
      await expect.poll(attemptsNow, { timeout: 20_000 }).toBe(before + queued)
      // Refreshed, the page counts them too.
      await expect
        .poll(
          async () => {
            await page.getByRole("button", { name: "Refresh attempts" }).click()
            return page.locator(".pager [role=status]").last().textContent()
          },
          { timeout: 10_000 }
        )
        .toContain(`of ${before + queued}`)
      expect(await page.locator("td .badge-success").count()).toBeGreaterThan(0)
      await shot("webhook-replay")

      // Resend of one event from its attempt row: one more attempt, answered synchronously.
      await page.locator("button[aria-label^='Resend event']").first().click()
      await expect.poll(attemptsNow, { timeout: 10_000 }).toBe(before + queued + 1)
    })

    it("is usable from the keyboard: a skip link, visible focus, and focus on each new view's heading", async () => {
      await page.goto(`${fixture.platform.baseUrl}/console#/wallets`)
      await page.getByRole("heading", { name: "Wallets" }).waitFor()
      // The skip link is the first thing the keyboard reaches.
      expect(await page.evaluate(() => document.querySelector("a[href], button, input, select, textarea")?.textContent)).toBe(
        "Skip to content"
      )
      await page.getByRole("link", { name: "Skip to content" }).focus()
      let tabs = 0
      while ((await page.evaluate(() => document.activeElement?.textContent)) !== "Transactions" && tabs++ < 12)
        await page.keyboard.press("Tab")
      const focused = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement
        return { text: element.textContent, outline: getComputedStyle(element).outlineStyle }
      })
      expect(focused).toEqual({ text: "Transactions", outline: "solid" })
      await page.keyboard.press("Enter")
      await page.getByRole("heading", { name: "Transactions" }).waitFor()
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("view-title")
      // The skip link moves the focus past the header and the navigation, without changing the view.
      await page.getByRole("link", { name: "Skip to content" }).focus()
      await page.keyboard.press("Enter")
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("main")
      expect(new URL(page.url()).hash).toBe("#/transactions")
    })

    it("lists the program's cardholders with their verification, never their date of birth or street", async () => {
      const { platform } = fixture
      const address = { line1: "7 Hidden Lane", city: "Springfield", postal_code: "12345", country: "CA" }
      const dob = { day: 17, month: 3, year: 1984 }
      const grace = ok(
        await platform.request("POST", "/v1/cardholders", {
          body: {
            type: "individual",
            name: "Grace Hopper",
            email: "grace@example.com",
            billing_address: address,
            individual: { first_name: "Grace", last_name: "Hopper", dob }
          }
        })
      )
      ok(
        await platform.request("POST", "/v1/cardholders", {
          body: { type: "business", name: "Acme Ltd", billing_address: { ...address, country: "GB" } }
        })
      )
      ok(await platform.request("POST", `/v1/cardholders/${grace.id}/verification`, { body: { status: "VERIFIED", reference: "kyc_77" } }))
      await page.getByRole("link", { name: "Cardholders" }).click()
      await page.getByRole("heading", { name: "Cardholders" }).waitFor()
      const rows = page.locator("table").filter({ hasText: "Cardholders" }).locator("tbody tr")
      await expect.poll(() => rows.count()).toBe(2)
      expect((await rows.nth(0).locator("td").allTextContents()).slice(0, 6)).toEqual([
        "Acme Ltd",
        "business",
        "—",
        "GB",
        "PENDING_VERIFICATION",
        "—"
      ])
      expect((await rows.nth(1).locator("td").allTextContents()).slice(0, 6)).toEqual([
        "Grace Hopper",
        "individual",
        "grace@example.com",
        "CA",
        "VERIFIED",
        "kyc_77"
      ])
      const shown = (await page.locator("main").textContent()) ?? ""
      expect(shown).not.toContain("Hidden Lane")
      expect(shown).not.toContain("1984")
      await shot("cardholders")
    })

    it("shows a viewer key what it may see, and the API's refusal of what it may not do", async () => {
      const { platform } = fixture
      const viewer = ok(await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "viewer", role: "viewer" } }))
      // A new tab: sessionStorage is the tab's own, so it starts signed out.
      const tab = await context.newPage()
      try {
        await tab.goto(`${platform.baseUrl}/console#/cards/${card.id}`)
        await tab.getByLabel("API key or access token").fill(viewer.secret)
        await tab.getByLabel("API key or access token").press("Enter")
        await tab.getByRole("heading", { name: `Card •••• ${card.last_four}` }).waitFor()
        const state = await tab.locator("[data-field=state]").textContent()
        await tab.locator(".actions button").first().click()
        await expect.poll(() => tab.locator("[role=alert]").textContent()).toContain("403 permission_denied")
        expect(await tab.locator("[role=alert]").textContent()).toContain("This key or token may not do this.")
        expect(ok(await platform.request("GET", `/v1/cards/${card.id}`)).state).toBe(state)
        await tab.getByRole("button", { name: "Show card details" }).click()
        await expect.poll(() => tab.locator(".panel [role=alert]").textContent()).toContain("403 permission_denied")
        expect(await tab.locator(".card-display iframe").count()).toBe(0)
        await tab.screenshot({ path: path.join(SCREENSHOTS, `console-${kind}-viewer-refused.png`), fullPage: true })
      } finally {
        await tab.close()
      }
    })

    it("sends a test event to the subscription and shows its attempt", async () => {
      await page.getByRole("link", { name: "Webhooks" }).click()
      await page.getByRole("link", { name: `Subscription ${fixture.receiver.url}` }).click()
      await page.getByRole("button", { name: "Send test event" }).click()
      await expect.poll(() => page.locator("[role=status] .success").textContent()).toContain("Test event: SUCCESS")
      await expect.poll(() => fixture.receiver.received.some((received) => received.body.includes('"webhook.test"'))).toBe(true)
    })

    it("searches events by type and time", async () => {
      await page.getByRole("link", { name: "Events" }).click()
      await page.getByLabel("Type").fill("card.updated")
      await page.getByLabel("From").fill("2000-01-01T00:00:00")
      await page.getByRole("button", { name: "Search" }).click()
      const expected = ok(await fixture.platform.request("GET", "/v1/events?type=card.updated&page_size=100")).data.length
      await expect.poll(() => page.locator("table").filter({ hasText: "Events in the window" }).locator("tbody tr").count()).toBe(expected)
      const shown = await page.locator("table tbody tr td:first-child").allTextContents()
      expect(new Set(shown)).toEqual(new Set(["card.updated"]))
      await shot("events")
      // A window in the past holds none of them.
      await page.getByLabel("To").fill("2000-01-02T00:00:00")
      await page.getByRole("button", { name: "Search" }).click()
      await expect.poll(() => page.locator("main").textContent()).toContain("No events in this window")
      // An unknown type is the API's 400, shown with its param.
      await page.getByLabel("From").fill("")
      await page.getByLabel("To").fill("")
      await page.getByLabel("Type").fill("no.such.type")
      await page.getByRole("button", { name: "Search" }).click()
      await expect.poll(() => page.locator("[role=alert]").textContent()).toContain("(type)")
      // Nothing the console did broke its own policy.
      expect(violations).toEqual([])
    })

    /** The posted balance of a wallet account, through the API. */
    const posted = async (accountId: string) =>
      ok(await fixture.platform.request("GET", `/v1/financial-accounts/${accountId}`)).balance.amount as number
    let grace: { id: string; financial_account_id: string }

    it("creates a wallet, funds it, sends a book transfer and issues a card, amounts entered in major units", async () => {
      const { platform } = fixture
      await page.getByRole("link", { name: "Wallets" }).click()
      const form = page.locator("#new-wallet")
      await form.getByLabel("Holder name").fill("Grace Hopper")
      await form.getByLabel("Holder email (optional)").fill("grace@example.com")
      await form.getByRole("button", { name: "Create wallet" }).click()
      await page.getByRole("heading", { name: "Wallet of Grace Hopper" }).waitFor()
      grace = ok(await platform.request("GET", `/v1/wallets/${new URL(page.url()).hash.split("/")[2]}`))
      expect(grace).toMatchObject({ holder: { name: "Grace Hopper", email: "grace@example.com" } })

      // Funding (a sandbox key): the amount in dollars, the currency in the label; a third decimal is refused before asking.
      const fund = page.locator("#fund-wallet")
      await fund.getByLabel("Amount (USD)").fill("12.345")
      await fund.getByRole("button", { name: "Fund wallet" }).click()
      await expect.poll(() => fund.locator("[role=alert]").textContent()).toBe("USD has 2 decimals.")
      expect(await posted(grace.financial_account_id)).toBe(0)
      await fund.getByLabel("Amount (USD)").fill("1,250.50")
      await fund.getByRole("button", { name: "Fund wallet" }).click()
      await expect.poll(() => page.locator("[data-balance=posted]").textContent()).toBe("1,250.50 USD")
      expect(await posted(grace.financial_account_id)).toBe(125_050)

      // A book transfer to Ada's wallet, chosen by her name.
      const ada = ok(await platform.request("GET", "/v1/wallets?page_size=100")).data.find((w: any) => w.holder.name === "Ada Lovelace")
      const adaBefore = await posted(ada.financial_account_id)
      const send = page.locator("#book-transfer")
      await send.getByLabel("To wallet").selectOption({ label: "Ada Lovelace" })
      await send.getByLabel("Amount (USD)").fill("50")
      await send.getByLabel("Description (optional)").fill("Lunch")
      await send.getByRole("button", { name: "Send" }).click()
      await expect.poll(() => page.locator("[data-balance=posted]").textContent()).toBe("1,200.50 USD")
      expect(await posted(ada.financial_account_id)).toBe(adaBefore + 5_000)
      // Its transfers (GET /v1/transfers?wallet_id=): the funding and the book transfer, sides named.
      const walletTransfers = page
        .locator("table", { has: page.locator("caption", { hasText: /^Transfers of this wallet$/ }) })
        .locator("tbody tr")
      await expect.poll(() => walletTransfers.count()).toBe(2)
      expect(await walletTransfers.first().textContent()).toContain("Lunch")
      expect(await walletTransfers.first().textContent()).toContain("Ada Lovelace")
      // Its book transfers name the accounts by holder, not by id.
      await expect
        .poll(() => page.locator("table").filter({ hasText: "Book transfers of this wallet" }).locator(".entries").first().textContent())
        .toContain("Ada Lovelace")
      await shot("wallet-acting")

      // A card on this wallet: its view names the wallet by holder, and its limit is in dollars.
      await page.locator("#new-card").getByLabel("Card type").selectOption("VIRTUAL")
      await page.getByRole("button", { name: "Issue card" }).click()
      await page.getByRole("heading", { name: /^Card •••• \d{4}/ }).waitFor()
      const cardId = new URL(page.url()).hash.split("/")[2]!
      expect(ok(await platform.request("GET", `/v1/cards/${cardId}`)).wallet_id).toBe(grace.id)
      expect(await page.getByRole("link", { name: "Wallet of Grace Hopper" }).textContent()).toBe("Grace Hopper")
      await page.getByLabel("Spending period").selectOption("DAILY")
      await page.getByLabel("Period limit (USD)").fill("75.25")
      await page.getByRole("button", { name: "Save controls" }).click()
      await expect
        .poll(async () => ok(await platform.request("GET", `/v1/cards/${cardId}`)).spending_period)
        .toEqual({
          interval: "DAILY",
          amount: 7_525
        })
      await expect.poll(() => page.locator(".fields").textContent()).toContain("DAILY: 75.25 USD")
      expect(await page.getByLabel("Period limit (USD)").inputValue()).toBe("75.25")
      // Every date in one format: year first, to the second.
      expect(await page.locator(".fields dd").last().textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      await shot("card-created")
    })

    it("lists transfers with both sides named, filters them, and sends a book transfer from the Transfers view", async () => {
      await page.getByRole("link", { name: "Transfers" }).click()
      await page.getByRole("heading", { name: "Transfers" }).waitFor()
      const rows = page.locator("table").filter({ hasText: "Transfers" }).locator("tbody tr")
      await expect.poll(() => rows.first().textContent()).toContain("Grace Hopper")
      expect(await rows.first().textContent()).toContain("Ada Lovelace")
      expect(await rows.first().textContent()).toContain("50.00 USD")
      await page.getByLabel("Rail").selectOption("fednow_instant")
      await expect.poll(() => rows.locator("td:nth-child(2)").allTextContents()).toEqual(expect.arrayContaining(["fednow_instant"]))
      expect(new Set(await rows.locator("td:nth-child(2)").allTextContents())).toEqual(new Set(["fednow_instant"]))
      const form = page.locator("#new-transfer")
      await form.getByLabel("From wallet").selectOption({ label: "Grace Hopper <grace@example.com>" })
      await form.getByLabel("To wallet").selectOption({ label: "Ada Lovelace" })
      await expect.poll(() => form.locator("label[for=book-amount]").textContent()).toBe("Amount (USD)")
      await form.getByLabel("Amount (USD)").fill("0.5")
      await form.getByRole("button", { name: "Send" }).click()
      await expect.poll(() => form.locator(".success").textContent()).toBe("0.50 USD sent from Grace Hopper to Ada Lovelace: SETTLED.")
      expect(await posted(grace.financial_account_id)).toBe(120_000)
      // More than the wallet holds: the API's refusal, shown with its code, and nothing moves.
      await form.getByLabel("Amount (USD)").fill("5000")
      await form.getByRole("button", { name: "Send" }).click()
      await expect.poll(() => form.locator("[role=alert]").textContent()).toContain("422")
      expect(await posted(grace.financial_account_id)).toBe(120_000)
      await shot("transfers")
    })

    it("creates a webhook subscription (its secret shown once), disables, enables and deletes it", async () => {
      const { platform, receiver } = fixture
      await page.getByRole("link", { name: "Webhooks" }).click()
      const form = page.locator("#new-subscription")
      await form.getByLabel("Endpoint URL").fill(`${receiver.url}/console-made`)
      await form.getByLabel("Event types").fill("no.such.type")
      await form.getByRole("button", { name: "Create subscription" }).click()
      await expect.poll(() => form.locator("[role=alert]").textContent()).toContain("(event_types")
      await form.getByLabel("Event types").fill("card.updated, wallet.updated")
      await form.getByRole("button", { name: "Create subscription" }).click()
      await expect.poll(() => form.locator("code.secret").textContent()).toMatch(/^whsec_/)
      await form.getByRole("link", { name: "Open the subscription" }).click()
      await page.getByRole("heading", { name: /Webhook subscription/ }).waitFor()
      const id = new URL(page.url()).hash.split("/")[2]!
      expect(ok(await platform.request("GET", `/v1/webhook-subscriptions/${id}`)).event_types).toEqual(["card.updated", "wallet.updated"])
      await page.getByRole("button", { name: "Disable" }).click()
      await page.getByRole("button", { name: "Enable" }).waitFor()
      expect(ok(await platform.request("GET", `/v1/webhook-subscriptions/${id}`)).disabled).toBe(true)
      await page.getByRole("button", { name: "Enable" }).click()
      await page.getByRole("button", { name: "Disable" }).waitFor()
      expect(ok(await platform.request("GET", `/v1/webhook-subscriptions/${id}`)).disabled).toBe(false)
      await shot("subscription-acting")
      await page.getByRole("button", { name: "Delete" }).click()
      await page.getByRole("button", { name: "Confirm: delete" }).click()
      await page.getByRole("heading", { name: "Webhook subscriptions" }).waitFor()
      expect((await platform.request("GET", `/v1/webhook-subscriptions/${id}`)).status).toBe(404)
    })

    it("creates an API key limited to the program (its secret shown once) and revokes it", async () => {
      const { platform } = fixture
      await page.getByRole("link", { name: "API keys" }).click()
      const form = page.locator("#new-key")
      await form.getByLabel("Name").fill("Console-made reader")
      await form.getByLabel("Role").selectOption("viewer")
      await form.getByRole("button", { name: "Create key" }).click()
      const secret = (await form.locator("code.secret").textContent())!
      expect(secret).toMatch(/^sk_sandbox_/)
      const made = ok(await platform.request("GET", "/v1/api-keys?page_size=100", { program: null })).data.find(
        (key: any) => key.name === "Console-made reader"
      )
      expect(made).toMatchObject({ role: "viewer", program_ids: [platform.org.program_id], pan_reveal: false })
      expect((await platform.request("GET", "/v1/wallets", { key: secret })).status).toBe(200)
      await expect.poll(() => page.locator("table").filter({ hasText: "API keys" }).textContent()).toContain("Console-made reader")
      await shot("api-keys")
      await page.getByRole("button", { name: "Revoke key Console-made reader" }).click()
      await page.getByRole("button", { name: "Confirm: revoke" }).click()
      await expect.poll(async () => (await platform.request("GET", "/v1/wallets", { key: secret })).status).toBe(401)
    })

    it("finds a holder's wallets by the whole name or email, in any letter case", async () => {
      await page.getByRole("link", { name: "Wallets" }).click()
      const rows = page.locator("table").filter({ hasText: "Wallets" }).locator("tbody tr")
      const search = page.getByLabel("Holder name or email")
      await search.fill("GRACE HOPPER")
      await page.getByRole("button", { name: "Find" }).click()
      await expect.poll(() => page.locator("caption").first().textContent()).toBe("Wallets of GRACE HOPPER")
      expect(await rows.allTextContents()).toEqual([expect.stringContaining("Grace Hopper")])
      await search.fill("Grace@Example.com")
      await search.press("Enter")
      await expect.poll(() => page.locator("caption").first().textContent()).toBe("Wallets of Grace@Example.com")
      expect(await rows.count()).toBe(1)
      await shot("wallet-search")
      // A part of a name is not a search: nothing found, said so.
      await search.fill("Grace")
      await search.press("Enter")
      await expect.poll(() => page.locator(".pager [role=status]").first().textContent()).toBe("No wallet of that holder.")
      await page.getByRole("button", { name: "Show all" }).click()
      await expect.poll(() => rows.count()).toBe(ok(await fixture.platform.request("GET", "/v1/wallets")).total_count)
    })

    it("finds cards by their last four digits", async () => {
      await page.getByRole("link", { name: "Cards" }).click()
      await page.getByLabel("Last four digits").fill(card.last_four)
      await page.getByRole("button", { name: "Find" }).click()
      await expect.poll(() => page.locator("caption").first().textContent()).toBe(`Cards ending ${card.last_four}`)
      const expected = ok(await fixture.platform.request("GET", `/v1/cards?last_four=${card.last_four}`))
      expect(expected.total_count).toBeGreaterThan(0)
      const shown = await page.locator("table tbody tr td:first-child").allTextContents()
      expect(shown).toEqual(expected.data.map(() => `•••• ${card.last_four}`))
      await shot("card-search")
    })

    it("draws the balance chart with round ticks on both axes", async () => {
      await page.getByRole("link", { name: "Wallets" }).click()
      await page.getByRole("link", { name: "Wallet of Ada Lovelace" }).click()
      await page.locator("svg.chart path.chart-line").waitFor()
      const amounts = await page.locator("svg.chart [data-axis=y] text").allTextContents()
      expect(amounts.length).toBeGreaterThanOrEqual(2)
      // Round steps (1, 2 or 5 × a power of ten) starting at zero: the wallet's balance never went below it.
      const values = amounts.map((label) => Math.round(Number(label.replace(/[^\d.]/g, "")) * 100))
      expect(values[0]).toBe(0)
      const step = values[1]! - values[0]!
      expect(String(step)).toMatch(/^[125]0*$/)
      expect(values.every((value, index) => value === index * step)).toBe(true)
      const times = await page.locator("svg.chart [data-axis=x] text").allTextContents()
      expect(times.length).toBeGreaterThanOrEqual(1)
      for (const label of times) expect(label).toMatch(/^(\d{4}-\d{2}-\d{2}|\d{2}:\d{2}(:\d{2})?)$/)
      await shot("chart")
    })

    it("is usable at phone width: nothing wider than the screen, every view", async () => {
      const { platform } = fixture
      const phone = await context.newPage()
      try {
        await phone.setViewportSize({ width: 390, height: 844 })
        await phone.goto(`${platform.baseUrl}/console`)
        await phone.getByLabel("API key or access token").fill(platform.org.api_key)
        await phone.getByLabel("API key or access token").press("Enter")
        await phone.getByRole("heading", { name: "Wallets" }).waitFor()
        const views = [
          ["wallets", "/wallets"],
          ["wallet", `/wallets/${grace.id}`],
          ["card", `/cards/${card.id}`],
          ["transaction", `/transactions/${transaction.id}`],
          ["transfers", "/transfers"],
          ["webhooks", "/webhooks"],
          ["api-keys", "/api-keys"]
        ] as const
        for (const [name, route] of views) {
          await phone.goto(`${platform.baseUrl}/console#${route}`)
          await phone.locator("#view-title").waitFor()
          await phone.waitForLoadState("networkidle")
          const widths = await phone.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }))
          expect(widths.page, `${name} at 390 px`).toBeLessThanOrEqual(widths.screen)
          if (name === "wallet") {
            // The chart's tick labels stay readable: drawn at least 10 px tall (the chart scrolls in its box instead of shrinking).
            await phone.locator("svg.chart .chart-label").first().waitFor()
            const heights = await phone
              .locator("svg.chart .chart-label")
              .evaluateAll((labels) => labels.map((label) => label.getBoundingClientRect().height))
            expect(Math.min(...heights)).toBeGreaterThanOrEqual(10)
          }
          await phone.screenshot({ path: path.join(SCREENSHOTS, `console-${kind}-phone-${name}.png`), fullPage: true })
        }
      } finally {
        await phone.close()
      }
      expect(violations).toEqual([])
    })
  })
})
