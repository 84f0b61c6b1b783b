import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { createClient, startOAuthPlatform } from "../oauth/support.js"
import { tokensFor } from "../security/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { expectBooksBalance } from "./support.js"

/**
 * Rail outcomes from the bank partner (docs/network.md#rail-outcomes, docs/ledger.md#returns), over
 * HTTP in production — where nothing else settles or returns a rail's transfer — and in sandbox,
 * on both stores: POST /v1/network/transfers/{id}/settle and /return need the key's `network`
 * right; a return makes the transfer RETURNED with its code and sends the money back by a
 * reversing transfer (an outbound return re-credits the wallet, an inbound one debits it, possibly
 * below zero; a PENDING inbound credit's pending amount is released); `transfer.returned`; a
 * second return is 409; every refusal writes nothing.
 */
describe.each(STORE_KINDS)("rail outcomes on %s", (kind) => {
  describe("in production", () => {
    let platform: TestPlatform
    beforeAll(async () => {
      platform = await startOAuthPlatform(kind, { environment: "production" })
    })
    afterAll(async () => {
      await platform?.close()
    })

    /** A program of its own (its own settlement account and events), the first admin key's: it holds every right. */
    const newProgram = async () => {
      const org = await platform.createOrganization("rails")
      const as = { key: org.api_key, program: org.program_id }
      const request = (method: string, path: string, body?: unknown, key = org.api_key) =>
        platform.request(method, path, { ...as, key, body })
      const wallet = async (tag?: string) => {
        const response = await request("POST", "/v1/wallets", { holder: { name: "Holder" }, ...(tag ? { tag } : {}) })
        expect(response.status, response.text).toBe(200)
        return response.body.financial_account_id as string
      }
      const send = async (rail: string, direction: "in" | "out", account: string, amount: number) => {
        const response = await request("POST", "/v1/transfers", {
          payment_rail: rail,
          amount,
          currency: "USD",
          [direction === "in" ? "to_financial_account_id" : "from_financial_account_id"]: account
        })
        expect(response.status, response.text).toBe(200)
        return response.body
      }
      const balances = async (account: string) => {
        const body = (await request("GET", `/v1/financial-accounts/${account}`)).body
        return { balance: body.balance.amount, pending: body.pending_balance.amount, available: body.available_balance.amount }
      }
      const settlement = async () => (await request("GET", "/v1/financial-accounts?kind=settlement&currency=USD")).body.data[0].id as string
      const settle = (id: string, key = org.api_key) => request("POST", `/v1/network/transfers/${id}/settle`, undefined, key)
      const returnTransfer = (id: string, body: unknown, key = org.api_key) =>
        request("POST", `/v1/network/transfers/${id}/return`, body, key)
      const eventsOf = async (type: string, id: string) =>
        (await request("GET", `/v1/events?type=${type}&page_size=100`)).body.data.filter((event: any) => event.data.object.id === id)
      const newKey = async (fields: Record<string, unknown>) => {
        const response = await platform.request("POST", "/v1/api-keys", { key: org.api_key, program: null, body: { name: "k", ...fields } })
        expect(response.status, response.text).toBe(200)
        return response.body
      }
      return { org, request, wallet, send, balances, settlement, settle, returnTransfer, eventsOf, newKey }
    }

    /** What a refusal must leave as it was: every transfer, book transfer, entry, balance row and event. */
    const snapshot = () =>
      onDatabase(platform, async (query) => ({
        transfers: await query("SELECT id, status, return_code, return_reason, updated_at FROM issuing_transfers ORDER BY id").then(
          (rows) => rows.map((row) => JSON.stringify(Object.values(row).map(String)))
        ),
        bookTransfers: Number((await query("SELECT COUNT(*) AS n FROM issuing_book_transfers"))[0]!.n),
        entries: Number((await query("SELECT COUNT(*) AS n FROM issuing_book_entries"))[0]!.n),
        balances: await query(
          "SELECT financial_account_id, book, SUM(debits_minor) AS d, SUM(credits_minor) AS c, SUM(pending_minor) AS p FROM issuing_balances GROUP BY financial_account_id, book ORDER BY financial_account_id, book"
        ).then((rows) => rows.map((row) => JSON.stringify(Object.values(row).map(String)))),
        events: Number((await query("SELECT COUNT(*) AS n FROM issuing_events"))[0]!.n)
      }))

    it("settles and returns only with the network right: 403 for keys without it, admin ones included, and nothing written", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      const inbound = await p.send("ach_same_day", "in", account, 500)
      const listed = await platform.request("GET", "/v1/api-keys", { key: p.org.api_key, program: null })
      expect(listed.body.data.map((key: { network: boolean }) => key.network)).toEqual([true])
      const developer = await p.newKey({ role: "developer" })
      const admin = await p.newKey({ role: "admin" })
      expect([developer.network, admin.network]).toEqual([false, false])
      const before = await snapshot()
      for (const key of [developer.secret, admin.secret]) {
        expectEnvelope(await p.settle(inbound.id, key), 403, { code: "permission_denied" })
        expectEnvelope(await p.returnTransfer(inbound.id, { return_code: "R01" }, key), 403, { code: "permission_denied" })
        // The right is checked before the transfer is looked up or the body decoded: an unknown
        // transfer or a malformed code is a 403 too.
        expectEnvelope(await p.returnTransfer(uuid(), { return_code: "R01" }, key), 403, { code: "permission_denied" })
        expectEnvelope(await p.returnTransfer(inbound.id, { return_code: 5 }, key), 403, { code: "permission_denied" })
        expectEnvelope(await p.returnTransfer(inbound.id, { return_code: "R01", extra: 1 }, key), 403, { code: "permission_denied" })
      }
      expect(await snapshot()).toEqual(before)
      // A key granted the right by the first admin key may.
      const network = await p.newKey({ role: "developer", network: true })
      const settled = await p.settle(inbound.id, network.secret)
      expect(settled.status, settled.text).toBe(200)
      expect(settled.body).toMatchObject({ id: inbound.id, status: "SETTLED", return_code: null, return_reason: null })
    })

    it("never lets an OAuth access token settle or return, whatever its scopes, and writes nothing", async () => {
      const created = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Token" } } })
      const inbound = await platform.request("POST", "/v1/transfers", {
        body: { payment_rail: "ach_same_day", amount: 40, currency: "USD", to_financial_account_id: created.body.financial_account_id }
      })
      expect(inbound.status, inbound.text).toBe(200)
      const client = await createClient(platform, { scopes: ["read", "write", "pan_reveal"] })
      const tokens = await tokensFor(platform, client, { scopes: ["read", "write", "pan_reveal"] })
      const before = await snapshot()
      for (const [path, body] of [
        ["settle", undefined],
        ["return", { return_code: "R01" }]
      ] as const) {
        const response = await platform.request("POST", `/v1/network/transfers/${inbound.body.id}/${path}`, {
          key: tokens.access_token,
          body
        })
        expectEnvelope(response, 403, { code: "permission_denied" })
      }
      expect(await snapshot()).toEqual(before)
    })

    it("settles a PENDING transfer in production as the sandbox's settle does: the inbound credit becomes available, 409 after", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      const inbound = await p.send("wire", "in", account, 700)
      expect(inbound).toMatchObject({ status: "PENDING", return_code: null, return_reason: null })
      expect(await p.balances(account)).toEqual({ balance: 700, pending: 700, available: 0 })
      // The sandbox's simulation does not exist in production.
      expectEnvelope(await p.request("POST", `/v1/simulate/transfers/${inbound.id}/settle`), 404, { code: "not_found" })
      const settled = await p.settle(inbound.id)
      expect(settled.status, settled.text).toBe(200)
      expect(settled.body).toMatchObject({ id: inbound.id, status: "SETTLED" })
      expect(await p.balances(account)).toEqual({ balance: 700, pending: 0, available: 700 })
      expect(await p.eventsOf("transfer.settled", inbound.id)).toHaveLength(1)
      expect((await p.request("GET", `/v1/transactions/${inbound.transaction_id}`)).body.status).toBe("SETTLED")
      const before = await snapshot()
      expectEnvelope(await p.settle(inbound.id), 409, { code: "conflict", param: "transfer_id" })
      expectEnvelope(await p.settle(uuid()), 404, { code: "not_found", param: "transfer_id" })
      expect(await snapshot()).toEqual(before)
    })

    it("returns a SETTLED outbound ACH transfer: RETURNED with its code, the wallet re-credited by a reversing transfer, transfer.returned, a second return 409", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      await p.send("fednow_instant", "in", account, 1_000)
      const outbound = await p.send("ach_same_day", "out", account, 400)
      expect((await p.settle(outbound.id)).status).toBe(200)
      expect(await p.balances(account)).toEqual({ balance: 600, pending: 0, available: 600 })
      const settlement = await p.settlement()
      const settlementBefore = (await p.balances(settlement)).balance

      const returned = await p.returnTransfer(outbound.id, { return_code: "R03", reason: "No account / unable to locate" })
      expect(returned.status, returned.text).toBe(200)
      expect(returned.body).toMatchObject({
        id: outbound.id,
        status: "RETURNED",
        return_code: "R03",
        return_reason: "No account / unable to locate",
        amount: 400,
        from_financial_account_id: account
      })
      expect((await p.request("GET", `/v1/transfers/${outbound.id}`)).body).toEqual(returned.body)
      expect(await p.balances(account)).toEqual({ balance: 1_000, pending: 0, available: 1_000 })
      expect((await p.balances(settlement)).balance).toBe(settlementBefore - 400)

      // The reversing transfer: same rail and transaction, the other way, SETTLED; two book transfers in the transaction.
      const transfers = (await p.request("GET", `/v1/transfers?transaction_id=${outbound.transaction_id}`)).body.data
      const reversal = transfers.find((t: any) => t.id !== outbound.id)
      expect(transfers).toHaveLength(2)
      expect(reversal).toMatchObject({
        payment_rail: "ach_same_day",
        amount: 400,
        status: "SETTLED",
        from_financial_account_id: settlement,
        to_financial_account_id: account,
        return_code: null
      })
      const books = (await p.request("GET", `/v1/transactions/${outbound.transaction_id}/book-transfers`)).body
      expect(books.total_count).toBe(2)
      expect((await p.request("GET", `/v1/transfers?status=RETURNED`)).body.data.map((t: any) => t.id)).toEqual([outbound.id])
      expect((await p.request("GET", `/v1/transfers?status=RETURNED&financial_account_id=${account}`)).body.total_count).toBe(1)

      const events = await p.eventsOf("transfer.returned", outbound.id)
      expect(events).toHaveLength(1)
      expect(events[0].data.object).toEqual(returned.body)
      expect(await p.eventsOf("transfer.created", reversal.id)).toHaveLength(1)

      const before = await snapshot()
      expectEnvelope(await p.returnTransfer(outbound.id, { return_code: "R01" }), 409, { code: "conflict", param: "transfer_id" })
      expectEnvelope(await p.settle(outbound.id), 409, { code: "conflict", param: "transfer_id" })
      expect(await snapshot()).toEqual(before)
      await expectBooksBalance(platform)
    })

    it("returns a PENDING outbound wire with free text: the wallet re-credited, the transaction no longer pending", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      await p.send("fednow_instant", "in", account, 300)
      const outbound = await p.send("wire", "out", account, 250)
      expect(await p.balances(account)).toEqual({ balance: 50, pending: 0, available: 50 })
      const returned = await p.returnTransfer(outbound.id, { return_code: "Beneficiary account closed" })
      expect(returned.status, returned.text).toBe(200)
      expect(returned.body).toMatchObject({ status: "RETURNED", return_code: "Beneficiary account closed", return_reason: null })
      expect(await p.balances(account)).toEqual({ balance: 300, pending: 0, available: 300 })
      const transaction = (await p.request("GET", `/v1/transactions/${outbound.transaction_id}`)).body
      expect(transaction.status).toBe("SETTLED")
      const updates = (await p.request("GET", "/v1/events?type=transaction.updated&page_size=100")).body.data.filter(
        (event: any) => event.data.object.id === outbound.transaction_id
      )
      expect(updates.map((event: any) => event.data.object.status).sort()).toEqual(["PENDING", "SETTLED"])
      await expectBooksBalance(platform)
    })

    it("returns a SETTLED inbound ACH credit already spent: the wallet debited below zero, shown as such", async () => {
      const p = await newProgram()
      const account = await p.wallet("customer-42")
      const other = await p.wallet()
      const inbound = await p.send("ach_same_day", "in", account, 800)
      expect((await p.settle(inbound.id)).status).toBe(200)
      const spent = await p.request("POST", "/v1/transfers", {
        payment_rail: "book",
        amount: 700,
        currency: "USD",
        from_financial_account_id: account,
        to_financial_account_id: other
      })
      expect(spent.status, spent.text).toBe(200)
      const returned = await p.returnTransfer(inbound.id, { return_code: "R10", reason: "Customer advises not authorized" })
      expect(returned.status, returned.text).toBe(200)
      expect(await p.balances(account)).toEqual({ balance: -700, pending: 0, available: -700 })
      expect(await p.balances(other)).toEqual({ balance: 700, pending: 0, available: 700 })
      // The event carries the tag of the wallet it concerns, as every transfer event does.
      const [event] = await p.eventsOf("transfer.returned", inbound.id)
      expect(event.tags).toEqual(["customer-42"])
      // A negative wallet pays nothing out.
      expectEnvelope(
        await p.request("POST", "/v1/transfers", {
          payment_rail: "book",
          amount: 1,
          currency: "USD",
          from_financial_account_id: account,
          to_financial_account_id: other
        }),
        422,
        { code: "insufficient_funds" }
      )
      await expectBooksBalance(platform)
    })

    it("returns a PENDING inbound ACH credit: its pending amount released with the reversal, the available balance unmoved", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      await p.send("fednow_instant", "in", account, 100)
      const inbound = await p.send("ach_same_day", "in", account, 900)
      expect(await p.balances(account)).toEqual({ balance: 1_000, pending: 900, available: 100 })
      const balanceEvents = async () =>
        (await p.request("GET", "/v1/events?type=balance.updated&page_size=100")).body.data.filter(
          (event: any) => event.data.object.id === account
        )
      const eventsBefore = (await balanceEvents()).length
      const returned = await p.returnTransfer(inbound.id, { return_code: "R02" })
      expect(returned.status, returned.text).toBe(200)
      expect(await p.balances(account)).toEqual({ balance: 100, pending: 0, available: 100 })
      // A returned credit never settles.
      expectEnvelope(await p.settle(inbound.id), 409, { code: "conflict" })
      expect(await p.balances(account)).toEqual({ balance: 100, pending: 0, available: 100 })
      // One balance.updated for the return, the account as the reversal and the release leave it (no state between).
      const after = await balanceEvents()
      expect(after).toHaveLength(eventsBefore + 1)
      expect(after[0].data.object).toMatchObject({
        balance: { amount: 100 },
        pending_balance: { amount: 0 },
        available_balance: { amount: 100 }
      })
      await expectBooksBalance(platform)
    })

    it("takes R01 to R85 for ACH and 1 to 32 printable characters for a wire; refuses anything else with 400 param return_code, writing nothing", async () => {
      const p = await newProgram()
      const account = await p.wallet()
      await p.send("fednow_instant", "in", account, 10_000)
      const ach = await p.send("ach_same_day", "out", account, 10)
      const wire = await p.send("wire", "out", account, 10)
      const before = await snapshot()
      for (const code of ["R00", "R86", "R99", "r01", "R1", "R001", "R01 ", "C01", "", "X".repeat(33)]) {
        expectEnvelope(await p.returnTransfer(ach.id, { return_code: code }), 400, { code: "invalid_request", param: "return_code" })
      }
      for (const code of ["", " ", "X".repeat(33), "line\nbreak"]) {
        expectEnvelope(await p.returnTransfer(wire.id, { return_code: code }), 400, { code: "invalid_request", param: "return_code" })
      }
      for (const body of [{}, { return_code: 1 }, { return_code: null }]) {
        expectEnvelope(await p.returnTransfer(ach.id, body), 400, { code: "invalid_request", param: "return_code" })
      }
      expectEnvelope(await p.returnTransfer(ach.id, { return_code: "R01", reason: "x".repeat(501) }), 400, {
        code: "invalid_request",
        param: "reason"
      })
      expectEnvelope(await p.returnTransfer(ach.id, { return_code: "R01", amount: 5 }), 400, { code: "invalid_request", param: "amount" })
      expect(await snapshot()).toEqual(before)

      for (const code of ["R01", "R85", "R29"]) {
        const transfer = await p.send("ach_same_day", "out", account, 10)
        const response = await p.returnTransfer(transfer.id, { return_code: code })
        expect(response.status, response.text).toBe(200)
        expect(response.body.return_code).toBe(code)
      }
      const text = await p.returnTransfer(wire.id, { return_code: "X".repeat(32), reason: null })
      expect(text.status, text.text).toBe(200)
      expect(text.body).toMatchObject({ return_code: "X".repeat(32), return_reason: null })
    })

    it("refuses to return a transfer of a rail without returns (409), an unknown or another program's transfer (404), writing nothing", async () => {
      const p = await newProgram()
      const q = await newProgram()
      const account = await p.wallet()
      const other = await p.wallet()
      const instant = await p.send("fednow_instant", "in", account, 1_000)
      const book = await p.request("POST", "/v1/transfers", {
        payment_rail: "book",
        amount: 10,
        currency: "USD",
        from_financial_account_id: account,
        to_financial_account_id: other
      })
      const foreign = await q.send("ach_same_day", "in", await q.wallet(), 10)
      const before = await snapshot()
      for (const id of [instant.id, book.body.id]) {
        expectEnvelope(await p.returnTransfer(id, { return_code: "R01" }), 409, { code: "conflict", param: "transfer_id" })
      }
      for (const id of [uuid(), foreign.id, "not-an-id"]) {
        expectEnvelope(await p.returnTransfer(id, { return_code: "R01" }), 404, { code: "not_found", param: "transfer_id" })
        expectEnvelope(await p.settle(id), 404, { code: "not_found", param: "transfer_id" })
      }
      expect(await snapshot()).toEqual(before)
    })
  })

  describe("in sandbox", () => {
    let platform: TestPlatform
    beforeAll(async () => {
      platform = await startPlatform(kind)
    })
    afterAll(async () => {
      await platform?.close()
    })

    it("serves the network's settle and return beside the sandbox's settle, which runs the same code", async () => {
      const request = (method: string, path: string, body?: unknown) => platform.request(method, path, { body })
      const wallet = (await request("POST", "/v1/wallets", { holder: { name: "Sandbox" } })).body.financial_account_id
      const send = async () =>
        (
          await request("POST", "/v1/transfers", {
            payment_rail: "ach_same_day",
            amount: 50,
            currency: "USD",
            to_financial_account_id: wallet
          })
        ).body
      const [a, b] = [await send(), await send()]
      const simulated = await request("POST", `/v1/simulate/transfers/${a.id}/settle`)
      const networked = await request("POST", `/v1/network/transfers/${b.id}/settle`)
      expect(simulated.status, simulated.text).toBe(200)
      expect(networked.status, networked.text).toBe(200)
      expect(Object.keys(simulated.body).sort()).toEqual(Object.keys(networked.body).sort())
      expect([simulated.body.status, networked.body.status]).toEqual(["SETTLED", "SETTLED"])
      const returned = await request("POST", `/v1/network/transfers/${a.id}/return`, { return_code: "R16" })
      expect(returned.status, returned.text).toBe(200)
      expectEnvelope(await request("POST", `/v1/simulate/transfers/${a.id}/settle`), 409, { code: "conflict" })
      const account = (await request("GET", `/v1/financial-accounts/${wallet}`)).body
      expect([account.balance.amount, account.pending_balance.amount]).toEqual([50, 0])
      await expectBooksBalance(platform)
    })
  })
})
