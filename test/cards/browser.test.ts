import * as fs from "node:fs"
import * as path from "node:path"
import type { BrowserContext } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { withCardDisplayFrameSrc } from "@issuing/client"
import { BASE_POLICY, type CardDisplayServer, startCardDisplayServer } from "../../examples/card-display/src/server.js"
import { chromiumAvailable, launchChromium } from "../support/chromium.js"
import { ROOT } from "../support/cli.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, issueCard, reveal } from "./helpers.js"

const available = chromiumAvailable("card display")

/** Where screenshots go (gitignored). */
const ARTIFACTS = path.join(ROOT, "test-artifacts")

describe.runIf(available)("card display in real headless Chromium (example host page)", () => {
  let platform: TestPlatform
  let host: CardDisplayServer
  let context: BrowserContext
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  let card: { id: string; last_four: string }
  let secrets: { pan: string; cvv: string; exp_month: number; exp_year: number }

  beforeAll(async () => {
    platform = await startPlatform("sqlite")
    const wallet = await createWallet(platform)
    card = await issueCard(platform, wallet.id)
    secrets = await reveal(platform, card.id)
    host = await startCardDisplayServer({
      issuingUrl: platform.baseUrl,
      apiKey: platform.org.api_key,
      programId: platform.org.program_id,
      cardId: card.id
    })
    browser = await launchChromium({ width: 640, height: 520 })
    context = browser.context
  })

  afterAll(async () => {
    await browser?.close()
    await host?.close()
    await platform?.close()
  })

  it("renders the card in a sandboxed iframe the parent cannot read, and its copy control works", async () => {
    const page = await context.newPage()
    const consoleErrors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    const served = await page.goto(host.url)
    // Rule 3: the host page runs under its own policy with the platform's origin added by the helper.
    const policy = served!.headers()["content-security-policy"]
    expect(policy).toBe(withCardDisplayFrameSrc(BASE_POLICY, platform.baseUrl))
    expect(policy).toContain(`frame-src ${new URL(platform.baseUrl).origin};`)
    expect(policy).not.toContain("frame-src 'none'")
    await page.click("#show")
    const iframe = page.locator("#slot iframe")
    await iframe.waitFor()

    // Rules 1 and 2: the iframe loads embed_url itself, sandboxed to scripts only, without a referrer.
    expect(await iframe.getAttribute("sandbox")).toBe("allow-scripts")
    expect(await iframe.getAttribute("referrerpolicy")).toBe("no-referrer")
    expect(await iframe.getAttribute("src")).toMatch(new RegExp(`^${platform.baseUrl}/v1/cards/embed\\?session_token=[A-Za-z0-9_-]{43}$`))

    // The frame shows number, expiry and code in full.
    const frame = page.frameLocator("#slot iframe")
    const grouped = secrets.pan.replace(/(\d{4})(?=\d)/g, "$1 ")
    await expect.poll(() => frame.locator("#pan").textContent()).toBe(grouped)
    const expiry = `${String(secrets.exp_month).padStart(2, "0")}/${String(secrets.exp_year % 100).padStart(2, "0")}`
    expect(await frame.locator("#expiry").textContent()).toBe(expiry)
    expect(await frame.locator("#cvv").textContent()).toBe(secrets.cvv)

    // Everything is visible inside the frame (rule 2: sized so nothing is cut off).
    const frameBox = (await iframe.boundingBox())!
    for (const id of ["#pan", "#expiry", "#cvv"]) {
      const box = (await frame.locator(id).boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(frameBox.x)
      expect(box.y).toBeGreaterThanOrEqual(frameBox.y)
      expect(box.x + box.width).toBeLessThanOrEqual(frameBox.x + frameBox.width)
      expect(box.y + box.height).toBeLessThanOrEqual(frameBox.y + frameBox.height)
    }

    // Rule 5, enforced by the browser: the parent's script cannot read the frame's document.
    const parentView = await page.evaluate(() => {
      const element = document.querySelector("#slot iframe") as HTMLIFrameElement
      let windowDocument: string
      try {
        windowDocument = String(element.contentWindow!.document.body.innerText)
      } catch (error) {
        windowDocument = `blocked: ${(error as Error).name}`
      }
      return { contentDocument: element.contentDocument === null, windowDocument, pageText: document.documentElement.outerHTML }
    })
    expect(parentView.contentDocument).toBe(true)
    expect(parentView.windowDocument).toBe("blocked: SecurityError")
    expect(parentView.pageText).not.toContain(secrets.pan)
    expect(parentView.pageText).not.toContain(grouped)

    // The copy control puts the raw number on the clipboard from inside the sandboxed frame.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: host.url })
    await page.evaluate(() => navigator.clipboard.writeText("nothing copied yet"))
    await frame.locator("button[data-target=pan]").click()
    await expect.poll(() => frame.locator("#status").textContent()).toBe("Card number copied to the clipboard.")
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secrets.pan)
    await frame.locator("button[data-target=cvv]").click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secrets.cvv)

    // The embed document's CSP let its own script and style run and blocked nothing of its own.
    expect(consoleErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([])

    fs.mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: path.join(ARTIFACTS, "card-display.png"), fullPage: true })
    expect(fs.statSync(path.join(ARTIFACTS, "card-display.png")).size).toBeGreaterThan(1000)
  })

  it("control: under the host's policy without the helper (frame-src 'none') the browser refuses the frame", async () => {
    const bare = await startCardDisplayServer({
      issuingUrl: platform.baseUrl,
      apiKey: platform.org.api_key,
      programId: platform.org.program_id,
      cardId: card.id,
      policy: BASE_POLICY
    })
    const page = await context.newPage()
    try {
      const refusals: Array<string> = []
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) refusals.push(message.text())
      })
      await page.goto(bare.url)
      await page.click("#show")
      await page.locator("#slot iframe").waitFor()
      await expect.poll(() => refusals.some((text) => text.includes("frame-src 'none'"))).toBe(true)
      expect(await page.frameLocator("#slot iframe").locator("#pan").count()).toBe(0)
    } finally {
      await page.close()
      await bare.close()
    }
  })

  it("blocks script injected into the embed document by its CSP", async () => {
    const session = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`)
    const page = await context.newPage()
    const violations: Array<string> = []
    page.on("console", (message) => violations.push(message.text()))
    const inject = () =>
      page.evaluate(() => {
        const script = document.createElement("script")
        script.textContent = "document.body.setAttribute('data-injected', 'yes')"
        document.body.appendChild(script)
        return document.body.getAttribute("data-injected")
      })
    // Control: on a page without a policy the same injection runs.
    await page.setContent("<!doctype html><body></body>")
    expect(await inject()).toBe("yes")
    // An inline script that is not the document's own (by hash) must not run.
    await page.goto(session.body.embed_url)
    expect(await inject()).toBeNull()
    // Opened top-level it is still sandboxed: its origin is opaque, never the platform's.
    expect(await page.evaluate(() => window.origin)).toBe("null")
    await page.close()
  })
})
