import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium } from "playwright-core"
import { describe, it } from "vitest"

/** Debian's chromium, which `.ci/run` installs when the machine lacks it. */
export const CHROMIUM = "/usr/bin/chromium"

/**
 * Whether the browser tests of `suite` can run: without Chromium they are skipped with a message,
 * except in CI (CI=true), where a test fails loudly instead — there the browser must be installed.
 */
export const chromiumAvailable = (suite: string): boolean => {
  const available = fs.existsSync(CHROMIUM)
  if (available) return true
  if (process.env.CI === "true") {
    describe(`${suite} in Chromium`, () => {
      it("needs Chromium", () => {
        throw new Error(`CI=true but ${CHROMIUM} is missing; .ci/run must install Debian's chromium package.`)
      })
    })
  } else {
    console.warn(`Skipping the ${suite} browser test: ${CHROMIUM} is not installed (apt-get install -y chromium).`)
  }
  return false
}

/** A headless Chromium with a fresh profile, launched as the machine doc says; `close` removes the profile. */
export const launchChromium = async (viewport?: { readonly width: number; readonly height: number }) => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-chromium-"))
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ],
    ...(viewport === undefined ? {} : { viewport })
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}
