import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

describe.each(STORE_KINDS)("smoke on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("lists the organization's programs with the admin key", async () => {
    const response = await platform.request("GET", "/v1/programs")
    expect(response.status).toBe(200)
    expect(response.body.total_count).toBe(1)
    expect(response.body.data[0].id).toBe(platform.org.program_id)
  })

  it("answers 401 without a key", async () => {
    expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401, {
      code: "authentication_error",
      param: null
    })
  })
})
