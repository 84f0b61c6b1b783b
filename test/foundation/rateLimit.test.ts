import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

// docs/api.md#rate-limits: a token bucket per API key; an empty bucket gives 429 rate_limited with Retry-After.
describe.each(STORE_KINDS)("rate limit on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind, { rateLimitBurst: 3, rateLimitPerSecond: 1 })
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("allows the burst, then answers 429 with Retry-After, per key, and refills over time", async () => {
    // The bucket refills 1 token a second; however slowly the requests go, the burst is granted and
    // requests then run dry within a few more (each that still passes took a token that had flowed in).
    let granted = 0
    let limited: Awaited<ReturnType<typeof platform.request>> | undefined
    while (limited === undefined) {
      const response = await platform.request("GET", "/v1/programs")
      if (response.status === 429) limited = response
      else {
        expect(response.status, response.text).toBe(200)
        granted += 1
        expect(granted).toBeLessThan(50)
      }
    }
    expect(granted).toBeGreaterThanOrEqual(3)
    expectEnvelope(limited, 429, { type: "rate_limit_error", code: "rate_limited", param: null })
    const retryAfter = limited.headers.get("retry-after")
    expect(retryAfter).toMatch(/^\d+$/)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    // Writes count against the same bucket, and a limited write writes nothing (a write that a
    // refilled token let through on a slow machine is written; the first refused one is not).
    let refusedName: string | undefined
    for (let i = 0; refusedName === undefined; i++) {
      expect(i).toBeLessThan(50)
      const write = await platform.request("POST", "/v1/programs", { program: null, body: { name: `Limited ${i}` } })
      if (write.status === 429) {
        expectEnvelope(write, 429, { code: "rate_limited" })
        refusedName = `Limited ${i}`
      } else expect(write.status, write.text).toBe(200)
    }

    // Another key has its own bucket.
    const other = await platform.createOrganization()
    expect((await platform.request("GET", "/v1/programs", { key: other.api_key })).status).toBe(200)

    // Unauthenticated requests are turned away by authentication, not by a key's bucket.
    expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401, { code: "authentication_error" })

    // Refilled over time: asked again until a token has flowed in (a refused request takes none).
    let refilled = await platform.request("GET", "/v1/programs?page_size=100")
    for (const deadline = Date.now() + 30_000; refilled.status === 429 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      refilled = await platform.request("GET", "/v1/programs?page_size=100")
    }
    expect(refilled.status, refilled.text).toBe(200)
    expect(refilled.body.data.some((program: { name: string }) => program.name === refusedName)).toBe(false)
  })
})
