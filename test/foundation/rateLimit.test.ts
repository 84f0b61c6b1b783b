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
    for (let index = 0; index < 3; index += 1) {
      expect((await platform.request("GET", "/v1/programs")).status).toBe(200)
    }
    const limited = await platform.request("GET", "/v1/programs")
    expectEnvelope(limited, 429, { type: "rate_limit_error", code: "rate_limited", param: null })
    const retryAfter = limited.headers.get("retry-after")
    expect(retryAfter).toMatch(/^\d+$/)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    // Writes count against the same bucket, and a limited write writes nothing.
    expectEnvelope(await platform.request("POST", "/v1/programs", { program: null, body: { name: "Limited" } }), 429, {
      code: "rate_limited"
    })

    // Another key has its own bucket.
    const other = await platform.createOrganization()
    expect((await platform.request("GET", "/v1/programs", { key: other.api_key })).status).toBe(200)

    // Unauthenticated requests are turned away by authentication, not by a key's bucket.
    expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401, { code: "authentication_error" })

    await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000 + 100))
    const refilled = await platform.request("GET", "/v1/programs")
    expect(refilled.status).toBe(200)
    expect(refilled.body.data.some((program: { name: string }) => program.name === "Limited")).toBe(false)
  })
})
