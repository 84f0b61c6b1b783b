import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditRecords, createKey, issueCard, reveal } from "../cards/helpers.js"
import { createClient, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform } from "../support/platform.js"
import { tokensFor } from "./support.js"

// The smaller items of the second security round: a token's 403 names a token, a HEAD of the
// embed document is no embed_view, and concurrent PAN searches never overshoot their budget.
describe.each(STORE_KINDS)("smaller security items on %s", (kind) => {
  const PER_MINUTE = 4
  let platform: TestPlatform
  let walletId: string
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind, { panSearchPerMinute: PER_MINUTE })
    walletId = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })).body.id
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("names an access token, not an API key, in a token's 403", async () => {
    const second = await platform.request("POST", "/v1/programs", { program: null, body: { name: "Second" } })
    const card = await issueCard(platform, walletId)
    const tokens = await tokensFor(platform, await createClient(platform))
    for (const response of [
      await platform.request("GET", "/v1/wallets", { key: tokens.access_token, program: second.body.id }),
      await platform.request("POST", "/v1/cards/search-by-pan", { key: tokens.access_token, body: { pan: "4000000000000002" } }),
      await platform.request("POST", `/v1/cards/${card.id}/reveal`, { key: tokens.access_token })
    ]) {
      expectEnvelope(response, 403, { code: "permission_denied" })
      expect(response.body.error.message).not.toMatch(/API key/)
    }
  })

  it("writes an embed_view record for a GET of the embed document, none for a HEAD", async () => {
    const card = await issueCard(platform, walletId)
    const session = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`)
    expect(session.status, session.text).toBe(200)
    const head = await fetch(session.body.embed_url, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(await auditRecords(platform, card.id, "embed_view")).toEqual([])
    expect((await fetch(session.body.embed_url)).status).toBe(200)
    expect(await auditRecords(platform, card.id, "embed_view")).toHaveLength(1)
  })

  it("counts concurrent PAN searches of one key atomically: never more than the budget run", async () => {
    const card = await issueCard(platform, walletId)
    const { pan } = await reveal(platform, card.id)
    const key = await createKey(platform, { role: "developer", pan_reveal: true })
    const responses = await Promise.all(
      Array.from({ length: PER_MINUTE * 4 }, () => platform.request("POST", "/v1/cards/search-by-pan", { key: key.secret, body: { pan } }))
    )
    const statuses = responses.map((response) => response.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(PER_MINUTE)
    expect(statuses.filter((status) => status === 429)).toHaveLength(PER_MINUTE * 3)
    const records = (await auditRecords(platform, card.id, "search_by_pan")).filter((record) => record.api_key_id === key.id)
    expect(records).toHaveLength(PER_MINUTE)
  })
})

describe("a CONNECT request", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startOAuthPlatform("sqlite")
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("gets the error envelope (405), not a closed connection", async () => {
    const { port } = new URL(platform.baseUrl)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), "127.0.0.1", () =>
        socket.write("CONNECT internal.example:443 HTTP/1.1\r\nHost: internal.example:443\r\n\r\n")
      )
      let text = ""
      socket.on("data", (chunk) => (text += chunk.toString("utf8")))
      socket.on("end", () => resolve(text))
      socket.on("error", reject)
    })
    expect(answer.startsWith("HTTP/1.1 405 ")).toBe(true)
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))
    expect(body.error).toMatchObject({ code: "method_not_allowed", type: "invalid_request_error" })
    expect(answer).toMatch(new RegExp(`Request-Id: ${body.error.request_id}`))
  })
})
