import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { balanceOf, createWallet, fund, transfer } from "./support.js"

describe.each(STORE_KINDS)("ledger endpoints on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  describe("money past 2^53", () => {
    it("refuses a posting that would take a running total past 2^53 − 1, so every balance shown is exact", async () => {
      // A program of its own: its settlement account's totals start at zero.
      const org = await platform.createOrganization("Big money")
      const as = { key: org.api_key, program: org.program_id }
      const wallet = (await platform.request("POST", "/v1/wallets", { ...as, body: { holder: { name: "Whale" } } })).body
      const inbound = (amount: number) =>
        platform.request("POST", "/v1/transfers", {
          ...as,
          body: { paymentRail: "fednow_instant", amount, currency: "USD", to_financial_account_id: wallet.financial_account_id }
        })
      for (let i = 0; i < 9; i += 1) expect((await inbound(1_000_000_000_000_000)).status).toBe(200)
      const tenth = expectEnvelope(await inbound(1_000_000_000_000_000), 422, { code: "balance_limit_exceeded", param: "amount" })
      expect(tenth.message).not.toContain("1000000000000000")
      expect((await inbound(7)).status).toBe(200)
      const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`, as)
      expect(account.body.balance.amount).toBe(9_000_000_000_000_007)
      expect(Number.isSafeInteger(account.body.balance.amount)).toBe(true)
      const books = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}/balances`, as)
      expect(books.body.data.map((row: any) => [row.book, row.credits.amount, row.debits.amount])).toEqual([
        ["principal", 9_000_000_000_000_007, 0],
        ["cash", 0, 9_000_000_000_000_007]
      ])
      // Nothing of the refused transfer was written.
      const transfers = await platform.request("GET", `/v1/transfers?financial_account_id=${wallet.financial_account_id}&page_size=100`, as)
      expect(transfers.body.total_count).toBe(10)
    })
  })

  describe("wallets and financial accounts", () => {
    it("creates a wallet with its account and events", async () => {
      const response = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Grace" } } })
      expect(response.status).toBe(200)
      const wallet = response.body
      expect(wallet).toMatchObject({ object: "wallet", program_id: platform.org.program_id, holder: { name: "Grace", email: null } })
      const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
      expect(account.body).toMatchObject({
        object: "financial_account",
        wallet_id: wallet.id,
        kind: "wallet",
        currency: "USD",
        balance: { amount: 0, currency: "USD" }
      })
      expect((await platform.request("GET", `/v1/wallets/${wallet.id}`)).body).toEqual(wallet)
      const events = await platform.request("GET", "/v1/events?type=wallet.created&page_size=100")
      const event = events.body.data.find((e: any) => e.data.object.id === wallet.id)
      expect(event).toMatchObject({ object: "event", type: "wallet.created", program_id: platform.org.program_id })
      expect((await platform.request("GET", `/v1/events/${event.id}`)).body).toEqual(event)
      const created = await platform.request("GET", "/v1/events?type=financial_account.created&page_size=100")
      expect(created.body.data.some((e: any) => e.data.object.id === wallet.financial_account_id)).toBe(true)
    })

    it("validates wallet input", async () => {
      expectEnvelope(await platform.request("POST", "/v1/wallets", { body: {} }), 400, { code: "invalid_request", param: "holder" })
      expectEnvelope(await platform.request("POST", "/v1/wallets", { body: { holder: { name: " " } } }), 400, { param: "holder.name" })
      expectEnvelope(await platform.request("POST", "/v1/wallets", { body: { holder: { name: "A", email: "nope" } } }), 400, {
        param: "holder.email"
      })
      expectEnvelope(await platform.request("POST", "/v1/wallets", { body: { holder: { name: "A" }, currency: "usd" } }), 400, {
        param: "currency"
      })
    })

    it("answers 404 for unknown, malformed and other-program ids", async () => {
      const other = await platform.createOrganization("Other")
      const theirs = await createWallet(platform, "Theirs", undefined, other.program_id).catch(() => undefined)
      // The admin key of our organization cannot reach the other program at all (403 on the header).
      expect(theirs).toBeUndefined()
      const foreign = await platform.request("POST", "/v1/wallets", {
        key: other.api_key,
        program: other.program_id,
        body: { holder: { name: "X" } }
      })
      expect(foreign.status).toBe(200)
      expectEnvelope(await platform.request("GET", `/v1/wallets/${foreign.body.id}`), 404, { code: "not_found", param: "wallet_id" })
      expectEnvelope(await platform.request("GET", `/v1/financial-accounts/${foreign.body.financial_account_id}`), 404, {
        param: "financial_account_id"
      })
      expectEnvelope(await platform.request("GET", `/v1/financial-accounts/not-a-uuid/balances`), 404, { param: "financial_account_id" })
      expectEnvelope(await platform.request("GET", `/v1/wallets/${uuid()}`), 404, { param: "wallet_id" })
      expectEnvelope(await platform.request("GET", `/v1/transfers/${uuid()}`), 404, { param: "transfer_id" })
      expectEnvelope(await platform.request("GET", `/v1/transactions/nope`), 404, { param: "transaction_id" })
      expectEnvelope(await platform.request("GET", `/v1/events/${uuid()}`), 404, { param: "event_id" })
      const mine = await createWallet(platform)
      const crossing = await transfer(platform, {
        paymentRail: "book",
        amount: 1,
        from_financial_account_id: mine.financial_account_id,
        to_financial_account_id: foreign.body.financial_account_id
      })
      expectEnvelope(crossing, 404, { param: "to_financial_account_id" })
    })

    it("reports balances per book", async () => {
      const a = await createWallet(platform)
      const b = await createWallet(platform)
      await fund(platform, a.financial_account_id, 500)
      expect(
        (
          await transfer(platform, {
            paymentRail: "book",
            amount: 200,
            from_financial_account_id: a.financial_account_id,
            to_financial_account_id: b.financial_account_id
          })
        ).status
      ).toBe(200)
      const balances = await platform.request("GET", `/v1/financial-accounts/${a.financial_account_id}/balances`)
      expect(balances.body.total_count).toBe(2)
      expect(balances.body.data.map((row: any) => [row.book, row.debits.amount, row.credits.amount, row.balance.amount])).toEqual([
        ["principal", 200, 500, 300],
        ["cash", 500, 200, 300]
      ])
      const settlement = await platform.request("GET", "/v1/financial-accounts?kind=settlement&currency=USD")
      expect(settlement.body.total_count).toBe(1)
      expect(settlement.body.data[0]).toMatchObject({ kind: "settlement", wallet_id: null })
      expectEnvelope(await platform.request("GET", "/v1/financial-accounts?kind=nope"), 400, { param: "kind" })
    })
  })

  describe("transfers", () => {
    it("validates the request", async () => {
      const a = await createWallet(platform)
      const b = await createWallet(platform)
      const from = a.financial_account_id
      const to = b.financial_account_id
      expectEnvelope(await transfer(platform, { amount: 1, from_financial_account_id: from, to_financial_account_id: to }), 400, {
        param: "paymentRail"
      })
      expectEnvelope(await transfer(platform, { paymentRail: "carrier_pigeon", amount: 1, to_financial_account_id: to }), 400, {
        param: "paymentRail"
      })
      expectEnvelope(await transfer(platform, { payment_rail: "nope", amount: 1, to_financial_account_id: to }), 400, {
        param: "payment_rail"
      })
      expectEnvelope(await transfer(platform, { paymentRail: "book", payment_rail: "wire", amount: 1, to_financial_account_id: to }), 400, {
        param: "paymentRail"
      })
      for (const amount of [0, -5, 1.5, 1e16]) {
        expectEnvelope(await transfer(platform, { paymentRail: "wire", amount, to_financial_account_id: to }), 400, { param: "amount" })
      }
      expectEnvelope(await transfer(platform, { paymentRail: "wire", amount: "5", to_financial_account_id: to }), 400, { param: "amount" })
      expectEnvelope(await transfer(platform, { paymentRail: "wire", amount: 5, currency: "usd", to_financial_account_id: to }), 400, {
        param: "currency"
      })
      expectEnvelope(await transfer(platform, { paymentRail: "book", amount: 5, from_financial_account_id: from }), 400, {
        param: "to_financial_account_id"
      })
      expectEnvelope(
        await transfer(platform, { paymentRail: "wire", amount: 5, from_financial_account_id: from, to_financial_account_id: to }),
        400,
        { param: "to_financial_account_id" }
      )
      expectEnvelope(await transfer(platform, { paymentRail: "wire", amount: 5 }), 400, { param: "to_financial_account_id" })
      expectEnvelope(
        await transfer(platform, { paymentRail: "book", amount: 5, from_financial_account_id: from, to_financial_account_id: from }),
        422,
        { code: "same_financial_account" }
      )
      const euro = await createWallet(platform, "Euro", "EUR")
      expectEnvelope(
        await transfer(platform, { paymentRail: "wire", amount: 5, to_financial_account_id: euro.financial_account_id }),
        422,
        { code: "currency_mismatch", param: "currency" }
      )
      expectEnvelope(
        await transfer(platform, { paymentRail: "book", amount: 5, from_financial_account_id: from, to_financial_account_id: to }),
        422,
        { code: "insufficient_funds", param: "amount" }
      )
      expectEnvelope(await transfer(platform, { paymentRail: "wire", amount: 5, from_financial_account_id: uuid() }), 404, {
        param: "from_financial_account_id"
      })
      // A body id that is not a UUID is a schema failure (400), a well-formed unknown one a 404.
      expectEnvelope(await transfer(platform, { paymentRail: "wire", amount: 5, from_financial_account_id: "acct_1" }), 400, {
        code: "invalid_request",
        param: "from_financial_account_id"
      })
      expectEnvelope(
        await transfer(platform, {
          paymentRail: "book",
          amount: 5,
          from_financial_account_id: from,
          to_financial_account_id: to,
          transaction_id: "nope"
        }),
        400,
        { param: "transaction_id" }
      )
      const settlement = (await platform.request("GET", "/v1/financial-accounts?kind=settlement&currency=USD")).body.data[0]
      if (settlement !== undefined) {
        expectEnvelope(
          await transfer(platform, {
            paymentRail: "book",
            amount: 5,
            from_financial_account_id: settlement.id,
            to_financial_account_id: to
          }),
          422,
          { code: "settlement_account_not_allowed" }
        )
      }
      // Nothing was written by any of the refused requests.
      expect((await platform.request("GET", `/v1/transfers?financial_account_id=${from}`)).body.total_count).toBe(0)
      expect(await balanceOf(platform, from)).toBe(0)
    })

    it("keeps ACH and wire PENDING until settled, then settles transfer and transaction", async () => {
      const a = await createWallet(platform)
      const inbound = await transfer(platform, {
        payment_rail: "ach_same_day",
        amount: 700,
        to_financial_account_id: a.financial_account_id,
        description: "payroll"
      })
      expect(inbound.status).toBe(200)
      expect(inbound.body).toMatchObject({
        object: "transfer",
        payment_rail: "ach_same_day",
        status: "PENDING",
        amount: 700,
        currency: "USD",
        description: "payroll",
        to_financial_account_id: a.financial_account_id
      })
      expect((await platform.request("GET", `/v1/transactions/${inbound.body.transaction_id}`)).body.status).toBe("PENDING")
      // The book transfer was posted at creation.
      expect(await balanceOf(platform, a.financial_account_id)).toBe(700)
      const settled = await platform.request("POST", `/v1/simulate/transfers/${inbound.body.id}/settle`)
      expect(settled.body).toMatchObject({ id: inbound.body.id, status: "SETTLED" })
      expect((await platform.request("GET", `/v1/transactions/${inbound.body.transaction_id}`)).body.status).toBe("SETTLED")
      expectEnvelope(await platform.request("POST", `/v1/simulate/transfers/${inbound.body.id}/settle`), 409, { code: "conflict" })
      expectEnvelope(await platform.request("POST", `/v1/simulate/transfers/${uuid()}/settle`), 404, { param: "transfer_id" })
      const events = (await platform.request("GET", "/v1/events?page_size=100")).body.data
      const about = (type: string) =>
        events.filter(
          (e: any) => e.type === type && (e.data.object.id === inbound.body.id || e.data.object.id === inbound.body.transaction_id)
        )
      expect(about("transfer.created")).toHaveLength(1)
      expect(about("transfer.settled")).toHaveLength(1)
      expect(about("transaction.updated").map((e: any) => e.data.object.status)).toEqual(["SETTLED", "PENDING"])
    })

    it("settles fednow_instant at once with transfer.settled.instant, and attaches transfers to a transaction", async () => {
      const a = await createWallet(platform)
      const instant = await fund(platform, a.financial_account_id, 50)
      expect((await platform.request("GET", `/v1/transfers/${instant.id}`)).body.status).toBe("SETTLED")
      const events = (await platform.request("GET", "/v1/events?type=transfer.settled.instant")).body.data
      expect(events[0].data.object.id).toBe(instant.id)
      const second = await transfer(platform, {
        paymentRail: "wire",
        amount: 20,
        from_financial_account_id: a.financial_account_id,
        transaction_id: instant.transaction_id
      })
      expect(second.body.transaction_id).toBe(instant.transaction_id)
      expect((await platform.request("GET", `/v1/transactions/${instant.transaction_id}`)).body.status).toBe("PENDING")
      expectEnvelope(
        await transfer(platform, {
          paymentRail: "wire",
          amount: 1,
          from_financial_account_id: a.financial_account_id,
          transaction_id: uuid()
        }),
        404,
        { param: "transaction_id" }
      )
      const list = await platform.request("GET", `/v1/transfers?transaction_id=${instant.transaction_id}&order_by=created_at`)
      expect(list.body.data.map((t: any) => t.id)).toEqual([instant.id, second.body.id])
      expectEnvelope(await platform.request("GET", "/v1/transfers?status=DONE"), 400, { param: "status" })
    })

    it("replays an idempotent transfer without moving money twice", async () => {
      const a = await createWallet(platform)
      const key = uuid()
      const body = { paymentRail: "fednow_instant", amount: 10, currency: "USD", to_financial_account_id: a.financial_account_id }
      const first = await platform.request("POST", "/v1/transfers", { body, idempotencyKey: key })
      const again = await platform.request("POST", "/v1/transfers", { body, idempotencyKey: key })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body).toEqual(first.body)
      expect(await balanceOf(platform, a.financial_account_id)).toBe(10)
    })
  })

  describe("GET /v1/transactions/{transaction_id}/book-transfers", () => {
    let transactionId: string
    let transferIds: Array<string>
    let wallet: string
    beforeAll(async () => {
      const a = await createWallet(platform)
      wallet = a.financial_account_id
      const first = await fund(platform, wallet, 1_000)
      transactionId = first.transaction_id
      transferIds = [first.id]
      for (let i = 0; i < 11; i++) {
        const next = await transfer(platform, {
          paymentRail: "wire",
          amount: 10 + i,
          from_financial_account_id: wallet,
          transaction_id: transactionId
        })
        expect(next.status, next.text).toBe(200)
        transferIds.push(next.body.id)
      }
    })
    const path = () => `/v1/transactions/${transactionId}/book-transfers`

    it("lists one balanced book transfer per transfer, newest first, ten per page", async () => {
      const page = await platform.request("GET", path())
      expect(page.body.total_count).toBe(12)
      expect(page.body.data).toHaveLength(10)
      expect(page.body.data.map((bt: any) => bt.transfer_id)).toEqual([...transferIds].reverse().slice(0, 10))
      for (const bt of page.body.data) {
        expect(bt.object).toBe("book_transfer")
        expect(bt.transaction_id).toBe(transactionId)
        expect(bt.entries).toHaveLength(4)
        const debit = bt.entries.filter((e: any) => e.entry_type === "DEBIT").reduce((s: number, e: any) => s + e.amount.amount, 0)
        const credit = bt.entries.filter((e: any) => e.entry_type === "CREDIT").reduce((s: number, e: any) => s + e.amount.amount, 0)
        expect(debit).toBe(credit)
        expect(bt.financial_account_ids).toContain(wallet)
      }
      const second = await platform.request("GET", `${path()}?page=2`)
      expect(second.body.data.map((bt: any) => bt.transfer_id)).toEqual([transferIds[1], transferIds[0]])
    })

    it("pages, sizes and orders as docs/api.md#paging says", async () => {
      expect((await platform.request("GET", `${path()}?page_size=5&page=3`)).body.data).toHaveLength(2)
      expect((await platform.request("GET", `${path()}?page-size=3`)).body.data).toHaveLength(3)
      expect((await platform.request("GET", `${path()}?page_size=0`)).body.data).toHaveLength(10)
      expect((await platform.request("GET", `${path()}?page_size=1000`)).body.data).toHaveLength(12)
      expect((await platform.request("GET", `${path()}?page=0&page_size=1`)).body.data[0].transfer_id).toBe(transferIds[11])
      const ascending = await platform.request("GET", `${path()}?order_by=posted_at&page_size=100`)
      expect(ascending.body.data.map((bt: any) => bt.transfer_id)).toEqual(transferIds)
      const descending = await platform.request("GET", `${path()}?order-by=posted_at&ascending=false&page_size=100`)
      expect(descending.body.data.map((bt: any) => bt.transfer_id)).toEqual([...transferIds].reverse())
      const invalidAscending = await platform.request("GET", `${path()}?order_by=posted_at&ascending=maybe&page_size=1`)
      expect(invalidAscending.body.data[0].transfer_id).toBe(transferIds[0])
      // A list that grows with money movement orders by time only (docs/api.md#paging).
      const byAmount = expectEnvelope(await platform.request("GET", `${path()}?order_by=amount`), 400, { param: "order_by" })
      expect(byAmount.message).toBe("Invalid order_by. Valid fields: posted_at, created_at.")
      const bad = expectEnvelope(await platform.request("GET", `${path()}?order_by=color`), 400, {
        code: "invalid_request",
        param: "order_by"
      })
      expect(bad.message).toContain("posted_at")
    })

    it("filters by book and by transfer_id", async () => {
      expect((await platform.request("GET", `${path()}?book=principal`)).body.total_count).toBe(12)
      expect((await platform.request("GET", `${path()}?book=cash`)).body.total_count).toBe(12)
      expect((await platform.request("GET", `${path()}?book=interest`)).body).toEqual({ data: [], total_count: 0, has_more: false })
      const one = await platform.request("GET", `${path()}?transfer_id=${transferIds[3]}`)
      expect(one.body.total_count).toBe(1)
      expect(one.body.data[0].transfer_id).toBe(transferIds[3])
      expect((await platform.request("GET", `${path()}?transfer_id=${uuid()}`)).body.total_count).toBe(0)
      expectEnvelope(await platform.request("GET", `${path()}?transfer_id=nope`), 400, { param: "transfer_id" })
    })

    it("answers 404, 401 and 403", async () => {
      expectEnvelope(await platform.request("GET", `/v1/transactions/${uuid()}/book-transfers`), 404, {
        code: "not_found",
        param: "transaction_id"
      })
      expectEnvelope(await platform.request("GET", `/v1/transactions/not-a-uuid/book-transfers`), 404, { param: "transaction_id" })
      const other = await platform.createOrganization("Elsewhere")
      expectEnvelope(await platform.request("GET", path(), { key: other.api_key, program: other.program_id }), 404, {
        param: "transaction_id"
      })
      expectEnvelope(await platform.request("GET", path(), { key: undefined }), 401, { code: "authentication_error" })
      expectEnvelope(await platform.request("GET", path(), { program: other.program_id }), 403, {
        code: "permission_denied",
        param: "X-Program-ID"
      })
      expectEnvelope(await platform.request("GET", path(), { program: null }), 400, { param: "X-Program-ID" })
    })

    it("lists an account's book transfers with the same parameters", async () => {
      const accountPath = `/v1/financial-accounts/${wallet}/book-transfers`
      const all = await platform.request("GET", `${accountPath}?page_size=100`)
      expect(all.body.total_count).toBe(12)
      expect(all.body.data.map((bt: any) => bt.transfer_id)).toEqual([...transferIds].reverse())
      expect((await platform.request("GET", `${accountPath}?transfer_id=${transferIds[5]}`)).body.data[0].transfer_id).toBe(transferIds[5])
      expect((await platform.request("GET", `${accountPath}?transaction_id=${transactionId}&book=cash`)).body.total_count).toBe(12)
      expect((await platform.request("GET", `${accountPath}?transaction_id=${uuid()}`)).body.total_count).toBe(0)
      expectEnvelope(await platform.request("GET", `/v1/financial-accounts/${uuid()}/book-transfers`), 404, {
        param: "financial_account_id"
      })
      expectEnvelope(await platform.request("GET", `${accountPath}?order_by=nope`), 400, { param: "order_by" })
    })
  })

  describe("events and lists", () => {
    it("lists events newest first with a type filter and rejects unknown types", async () => {
      const events = await platform.request("GET", "/v1/events?page_size=5")
      expect(events.body.data).toHaveLength(5)
      const times = events.body.data.map((e: any) => e.created_at)
      expect(times).toEqual([...times].sort().reverse())
      expectEnvelope(await platform.request("GET", "/v1/events?type=nope"), 400, { param: "type" })
      expectEnvelope(await platform.request("GET", "/v1/events?order_by=type"), 400, { param: "order_by" })
    })

    it("lists wallets and transactions newest first and by order_by", async () => {
      const wallets = await platform.request("GET", "/v1/wallets?page_size=100")
      const ids = wallets.body.data.map((w: any) => w.id)
      const ascending = await platform.request("GET", "/v1/wallets?page_size=100&order_by=created_at")
      expect(ascending.body.data.map((w: any) => w.id)).toEqual([...ids].reverse())
      const settled = await platform.request("GET", "/v1/transactions?status=SETTLED&page_size=100")
      expect(
        settled.body.data.every(
          (t: any) => t.status === "SETTLED" && t.object === "transaction" && t.card_id === null && t.decline_reason === null
        )
      ).toBe(true)
      expectEnvelope(await platform.request("GET", "/v1/transactions?status=LOST"), 400, { param: "status" })
      expectEnvelope(await platform.request("GET", "/v1/transactions?card_id=x"), 400, { param: "card_id" })
    })
  })
})

describe("simulation in production", () => {
  it("answers 404 for the settle simulation", async () => {
    const platform = await startPlatform("sqlite", { environment: "production" })
    try {
      expectEnvelope(await platform.request("POST", `/v1/simulate/transfers/${uuid()}/settle`), 404, { code: "not_found", param: null })
    } finally {
      await platform.close()
    }
  })
})
