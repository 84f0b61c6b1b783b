import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { issueCard } from "../cards/helpers.js"
import { createWallet, fund, transfer } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createProgram } from "./fixtures.js"

interface Listed {
  readonly id: string
}

/** A list and the filters to walk it with ("" is no filter); `program: null` for organization lists. */
interface ListCase {
  readonly path: string
  readonly filters: ReadonlyArray<string>
  readonly program?: null
}

const REDIRECT_URI = "https://app.example/callback"

// docs/api.md#paging, keyset paging: starting_after on every /v1 list, over HTTP on both stores.
describe.each(STORE_KINDS)("starting_after on %s", (kind) => {
  let platform: TestPlatform
  let cases: Array<ListCase>
  let transferIds: Array<string>
  let otherProgramTransfer: string
  let firstWallet: { id: string; financial_account_id: string }

  beforeAll(async () => {
    platform = await startPlatform(kind)
    for (let index = 0; index < 6; index += 1) await createProgram(platform, index % 2 === 0 ? "Tie" : `Program ${index}`)
    for (let index = 0; index < 5; index += 1) {
      const key = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "Tie", role: "viewer" } })
      expect(key.status, key.text).toBe(200)
      const client = await platform.request("POST", "/v1/oauth-clients", {
        program: null,
        body: { name: index % 2 === 0 ? "Tie" : `App ${index}`, type: "confidential", scopes: ["read"], redirect_uris: [REDIRECT_URI] }
      })
      expect(client.status, client.text).toBe(200)
    }
    const wallets = []
    for (let index = 0; index < 3; index += 1) wallets.push(await createWallet(platform, `Holder ${index}`))
    firstWallet = wallets[0]!
    for (let index = 0; index < 9; index += 1) await fund(platform, wallets[index % 3]!.financial_account_id, 100 * (1 + (index % 2)))
    for (let index = 0; index < 4; index += 1) {
      const moved = await transfer(platform, {
        paymentRail: "book",
        amount: 50,
        from_financial_account_id: wallets[0]!.financial_account_id,
        to_financial_account_id: wallets[1 + (index % 2)]!.financial_account_id
      })
      expect(moved.status, moved.text).toBe(200)
    }
    for (let index = 0; index < 4; index += 1) await issueCard(platform, wallets[index % 2]!.id)
    for (let index = 0; index < 4; index += 1) {
      const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
        body: { url: `https://hooks.example/${index}`, event_types: ["wallet.created"] }
      })
      expect(subscription.status, subscription.text).toBe(200)
      if (index % 2 === 0) {
        const disabled = await platform.request("PATCH", `/v1/webhook-subscriptions/${subscription.body.id}`, { body: { disabled: true } })
        expect(disabled.status, disabled.text).toBe(200)
      }
    }
    const transactions = await platform.request("GET", "/v1/transactions?page_size=1")
    const transactionId = transactions.body.data[0].id
    const listedTransfers = await platform.request("GET", "/v1/transfers?page_size=100")
    transferIds = listedTransfers.body.data.map((row: Listed) => row.id)
    const other = await createProgram(platform, "Other")
    const otherWallet = await createWallet(platform, "Other holder", undefined, other.id)
    const otherFunding = await transfer(
      platform,
      { paymentRail: "fednow_instant", amount: 100, to_financial_account_id: otherWallet.financial_account_id },
      other.id
    )
    expect(otherFunding.status, otherFunding.text).toBe(200)
    otherProgramTransfer = otherFunding.body.id
    const account = firstWallet.financial_account_id
    cases = [
      { path: "/v1/programs", filters: [""], program: null },
      { path: "/v1/api-keys", filters: [""], program: null },
      { path: "/v1/oauth-clients", filters: [""], program: null },
      { path: "/v1/wallets", filters: [""] },
      { path: "/v1/financial-accounts", filters: ["", "kind=wallet", `wallet_id=${firstWallet.id}`, "currency=USD"] },
      {
        path: "/v1/transfers",
        filters: ["", "status=SETTLED", "payment_rail=book", `financial_account_id=${account}`, `transaction_id=${transactionId}`]
      },
      { path: "/v1/transactions", filters: ["", "status=SETTLED"] },
      { path: `/v1/financial-accounts/${account}/book-transfers`, filters: ["", "book=principal"] },
      { path: `/v1/transactions/${transactionId}/book-transfers`, filters: [""] },
      { path: "/v1/events", filters: ["", "type=wallet.created"] },
      { path: "/v1/cards", filters: ["", `wallet_id=${firstWallet.id}`, "state=ACTIVE"] },
      { path: "/v1/card-audit-records", filters: [""] },
      { path: "/v1/webhook-subscriptions", filters: ["", "disabled=true"] },
      { path: "/v1/webhook-attempts", filters: [""] }
    ]
  })
  afterAll(async () => {
    await platform?.close()
  })

  const get = async (path: string, query: string, program?: null) => {
    const response = await platform.request("GET", `${path}?${query}`, program === null ? { program: null } : {})
    expect(response.status, `${path}?${query}: ${response.text}`).toBe(200)
    return response.body as { data: Array<Listed>; total_count: number }
  }

  /** Walks a list page by page with starting_after; returns every id in the order seen. */
  const walk = async (path: string, query: string, size: number, program?: null) => {
    const walked: Array<string> = []
    let after: string | undefined
    for (let guard = 0; guard < 200; guard += 1) {
      const page = await get(path, `${query}&page_size=${size}${after === undefined ? "" : `&starting_after=${after}`}`, program)
      walked.push(...page.data.map((row) => row.id))
      if (page.data.length < size) return walked
      after = page.data.at(-1)!.id
    }
    throw new Error("walk did not end")
  }

  /** The list's order fields, as its 400 for an unknown order_by names them. */
  const orderFieldsOf = async (path: string, program?: null) => {
    const rejected = await platform.request("GET", `${path}?order_by=nope`, program === null ? { program: null } : {})
    const error = expectEnvelope(rejected, 400, { param: "order_by" })
    return error.message
      .replace(/.*Valid fields: /, "")
      .replace(/\.$/, "")
      .split(", ")
  }

  it("walks every list, with every order field, direction and filter, exactly as one page lists it", async () => {
    let walkedLists = 0
    for (const list of cases) {
      const orders = [
        "",
        ...(await orderFieldsOf(list.path, list.program)).flatMap((field) => [`order_by=${field}`, `order_by=${field}&ascending=false`])
      ]
      for (const filter of list.filters) {
        for (const order of orders) {
          const query = [filter, order].filter((part) => part !== "").join("&")
          const whole = await get(list.path, `${query}&page_size=100`, list.program)
          expect(whole.total_count).toBeLessThan(100)
          const expected = whole.data.map((row) => row.id)
          for (const size of [2]) expect(await walk(list.path, query, size, list.program), `${list.path}?${query}`).toEqual(expected)
          if (expected.length > 3) walkedLists += 1
        }
      }
    }
    // Most walks crossed several pages (webhook attempts may have none yet).
    expect(walkedLists).toBeGreaterThan(40)
  }, 240_000)

  it("breaks ties on id: order_by=name walks the tied rows in id order", async () => {
    for (const [path, field, program] of [["/v1/programs", "name", null]] as const) {
      for (const ascending of [true, false]) {
        const walked = await walk(path, `order_by=${field}&ascending=${ascending}`, 2, program ?? undefined)
        const rows = (await get(path, `order_by=${field}&ascending=${ascending}&page_size=100`, program ?? undefined)).data as Array<
          Listed & Record<string, unknown>
        >
        expect(walked).toEqual(rows.map((row) => row.id))
        const value = (row: Record<string, unknown>) => String(row[field])
        const tied = rows.filter((row) => rows.some((other) => other !== row && value(other) === value(row)))
        expect(tied.length).toBeGreaterThan(2)
        for (let index = 1; index < rows.length; index += 1) {
          const [before, after] = [rows[index - 1]!, rows[index]!]
          if (value(before) === value(after)) expect(before.id < after.id).toBe(ascending)
        }
      }
    }
  })

  it("never overlaps or skips while transfers are being inserted", async () => {
    const before = (await get("/v1/transfers", "page_size=100")).data.map((row) => row.id)
    let inserting = true
    const inserted: Array<string> = []
    const writer = (async () => {
      while (inserting) {
        const posted = await fund(platform, firstWallet.financial_account_id, 7)
        inserted.push(posted.id)
      }
    })()
    let newest: Array<string> = []
    let oldest: Array<string> = []
    try {
      newest = await walk("/v1/transfers", "", 2)
      oldest = await walk("/v1/transfers", "order_by=created_at", 2)
    } finally {
      inserting = false
      await writer
    }
    // Newest first: rows inserted during the walk sort before the cursor, so past its first page
    // the walk is the list as it began; only the first page can show new rows, at its front.
    const fresh = newest.filter((id) => !before.includes(id))
    expect(newest).toEqual([...fresh, ...before])
    // Each new row is one of the writer's (checked once it stopped: a transfer is listed from its
    // commit on, which can come before its POST's answer reaches the writer).
    for (const id of fresh) expect(inserted).toContain(id)
    // Oldest first: the list as it began, then the rows inserted in time to be reached, each once.
    expect(oldest.slice(0, before.length)).toEqual([...before].reverse())
    expect(new Set(oldest).size).toBe(oldest.length)
    for (const id of oldest.slice(before.length)) expect(inserted).toContain(id)
    expect(inserted.length).toBeGreaterThan(0)
  })

  it("400 param starting_after: with page, malformed, of another list, of another program, or filtered out", async () => {
    const last = transferIds[0]!
    for (const query of [
      `page=1&starting_after=${last}`,
      `page=2&starting_after=${last}`,
      "starting_after=not-an-id",
      "starting_after=",
      `starting_after=${uuid()}`,
      `starting_after=${firstWallet.id}`,
      `starting_after=${otherProgramTransfer}`,
      `payment_rail=book&starting_after=${transferIds.at(-1)}`
    ]) {
      const response = await platform.request("GET", `/v1/transfers?${query}`)
      const error = expectEnvelope(response, 400, { code: "invalid_request", param: "starting_after" })
      expect(JSON.stringify(response.body)).not.toContain(otherProgramTransfer)
      expect(error.message).not.toContain(last)
    }
    // The other program's own id is a fine cursor on its own list, never on this one.
    expectEnvelope(await platform.request("GET", `/v1/events?starting_after=${otherProgramTransfer}`), 400, { param: "starting_after" })
    // Upper case is the same id.
    const upper = await get("/v1/transfers", `starting_after=${transferIds[0]!.toUpperCase()}&page_size=100`)
    expect(upper.data.map((row) => row.id)).toEqual(transferIds.slice(1))
  })
})
