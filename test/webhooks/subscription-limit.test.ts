import { WEBHOOK_LIMITS } from "@issuing/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

/** The webhook subscriptions a program may have (docs/webhooks.md): 422 subscription_limit_reached past it. */
describe.each(STORE_KINDS)("webhook subscription limit on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const LIMIT = WEBHOOK_LIMITS.maxSubscriptionsPerProgram
  // A sandbox platform accepts loopback URLs; nothing is delivered (no event of the type is emitted).
  const subscribe = (as: { key: string; program: string }) =>
    platform.request("POST", "/v1/webhook-subscriptions", {
      ...as,
      body: { url: "http://127.0.0.1:9/hook", event_types: ["card.created"] }
    })
  const countOf = async (as: { key: string; program: string }) =>
    (await platform.request("GET", "/v1/webhook-subscriptions?page_size=1", as)).body.total_count

  it("refuses the subscription past the limit, counts per program, and frees a place on delete", async () => {
    const org = await platform.createOrganization("limit")
    const as = { key: org.api_key, program: org.program_id }
    const created: Array<string> = []
    for (let i = 0; i < LIMIT; i++) {
      const response = await subscribe(as)
      expect(response.status, response.text).toBe(200)
      created.push(response.body.id)
    }
    expectEnvelope(await subscribe(as), 422, { type: "invalid_request_error", code: "subscription_limit_reached", param: null })
    expect(await countOf(as)).toBe(LIMIT)
    // Another program's limit is its own.
    const other = await platform.createOrganization("other")
    expect((await subscribe({ key: other.api_key, program: other.program_id })).status).toBe(200)
    // Deleting one frees its place, and only one.
    expect((await platform.request("DELETE", `/v1/webhook-subscriptions/${created[0]}`, as)).status).toBe(200)
    expect((await subscribe(as)).status).toBe(200)
    expectEnvelope(await subscribe(as), 422, { code: "subscription_limit_reached" })
    expect(await countOf(as)).toBe(LIMIT)
  })

  it("admits exactly one of concurrent creations for the last place, and never more than the limit", async () => {
    const org = await platform.createOrganization("race")
    const as = { key: org.api_key, program: org.program_id }
    const filled = await Promise.all(Array.from({ length: LIMIT - 1 }, () => subscribe(as)))
    expect(filled.every((response) => response.status === 200)).toBe(true)
    // As many at once as the pool has connections and more: all count the same LIMIT − 1.
    const answers = await Promise.all(Array.from({ length: 20 }, () => subscribe(as)))
    expect(answers.filter((response) => response.status === 200)).toHaveLength(1)
    for (const refused of answers.filter((response) => response.status === 422)) {
      expectEnvelope(refused, 422, { code: "subscription_limit_reached" })
    }
    expect(await countOf(as)).toBe(LIMIT)
  })
})
