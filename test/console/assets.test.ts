import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

// The console's three files over HTTP (docs/console.md): public, self-contained, under a strict policy.
describe.each(STORE_KINDS)("the console's page and assets (%s)", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const get = (path: string) => fetch(`${platform.baseUrl}${path}`)

  it("serves the page with a policy allowing only its own script, stylesheet, API and the card display's frames", async () => {
    const response = await get("/console")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(response.headers.get("content-security-policy")).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-src ${platform.baseUrl}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
    )
    expect(response.headers.get("x-frame-options")).toBe("DENY")
    expect(response.headers.get("referrer-policy")).toBe("no-referrer")
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("cache-control")).toBe("no-store")
    const html = await response.text()
    expect(html).toContain(`<script defer src="/console/console.js"></script>`)
    expect(html).toContain(`<link rel="stylesheet" href="/console/console.css">`)
    // No inline script or style: the policy would refuse them.
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|<style/)
  })

  it("serves the bundle and the stylesheet, which load nothing from another origin", async () => {
    const script = await get("/console/console.js")
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    const code = await script.text()
    expect(code.length).toBeGreaterThan(1000)
    // The only absolute URL in the bundle is the SVG namespace (a name, never fetched).
    expect([...new Set(code.match(/https?:\/\/[^"'`\s)]+/g) ?? [])]).toEqual(["http://www.w3.org/2000/svg"])
    const style = await get("/console/console.css")
    expect(style.status).toBe(200)
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8")
    const css = await style.text()
    expect(css).toContain(".chart-line")
    expect(css).not.toMatch(/@import|url\(/)
  })

  it("needs no key, and answers other methods with the error envelope", async () => {
    const posted = await fetch(`${platform.baseUrl}/console`, { method: "POST" })
    expect(posted.status).toBe(405)
    expect(posted.headers.get("allow")).toBe("GET")
    expect((await posted.json()).error.code).toBe("method_not_allowed")
    const missing = await get("/console/other.js")
    expect(missing.status).toBe(404)
    expect((await missing.json()).error.code).toBe("not_found")
  })
})
