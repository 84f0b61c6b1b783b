import { SqliteWriter } from "@issuing/store-sqlite"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ROOT } from "../support/cli.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { balanceOf, createWallet, fund, transfer } from "./support.js"

/** POST /v1/transfers/batch (docs/ledger.md#batches): many transfers, one request, one database transaction. */
describe.each(STORE_KINDS)("transfer batches on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const batch = (body: unknown, options: { readonly idempotencyKey?: string } = {}) =>
    platform.request("POST", "/v1/transfers/batch", { body, ...options })
  const book = (from: string, to: string, amount: unknown) => ({
    paymentRail: "book",
    amount,
    currency: "USD",
    from_financial_account_id: from,
    to_financial_account_id: to
  })
  const transfersOf = async (accountId: string) =>
    (await platform.request("GET", `/v1/transfers?financial_account_id=${accountId}&page_size=100`)).body.total_count

  it("answers every item in order: its transfer, or the error a single POST would have had; the others commit", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    await fund(platform, a.financial_account_id, 100)
    const response = await batch({
      transfers: [
        book(a.financial_account_id, b.financial_account_id, 30),
        book(a.financial_account_id, b.financial_account_id, 500), // more than A holds
        book(a.financial_account_id, b.financial_account_id, -1), // malformed
        { payment_rail: "ach_same_day", amount: 20, currency: "USD", to_financial_account_id: b.financial_account_id },
        book(a.financial_account_id, uuid(), 5), // unknown account
        book(a.financial_account_id, b.financial_account_id, 70) // exactly what is left
      ]
    })
    expect(response.status, response.text).toBe(200)
    expect(response.body.object).toBe("transfer_batch")
    const [first, tooMuch, malformed, inbound, unknown, rest] = response.body.data
    expect(first).toMatchObject({ object: "transfer", amount: 30, status: "SETTLED" })
    expect(tooMuch.error).toMatchObject({ type: "invalid_request_error", code: "insufficient_funds", param: "amount" })
    expect(tooMuch.error.request_id).toBe(response.headers.get("request-id"))
    expect(tooMuch.error.doc_url).toMatch(/\/docs\/errors\/insufficient_funds$/)
    expect(malformed.error).toMatchObject({ code: "invalid_request", param: "amount" })
    expect(inbound).toMatchObject({ object: "transfer", payment_rail: "ach_same_day", status: "PENDING" })
    expect(unknown.error).toMatchObject({ code: "not_found", param: "to_financial_account_id" })
    expect(rest).toMatchObject({ object: "transfer", amount: 70 })
    expect(await balanceOf(platform, a.financial_account_id)).toBe(0)
    expect(await balanceOf(platform, b.financial_account_id)).toBe(120)
    // Each posted item has its book transfer and its events, as a single transfer does.
    for (const posted of [first, inbound, rest]) {
      const books = await platform.request("GET", `/v1/transactions/${posted.transaction_id}/book-transfers`)
      expect(books.body.data.map((row: any) => row.transfer_id)).toEqual([posted.id])
      const events = await platform.request("GET", "/v1/events?type=transfer.created&page_size=100")
      expect(events.body.data.some((event: any) => event.data.object.id === posted.id)).toBe(true)
    }
    expect(await transfersOf(a.financial_account_id)).toBe(3)
  })

  it("answers a transfer, single or batched, with the text GET answers for it, and an item's error as a single POST's", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    await fund(platform, a.financial_account_id, 100)
    const described = { ...book(a.financial_account_id, b.financial_account_id, 7), description: "rent", metadata: { order: "42" } }
    const single = await platform.request("POST", "/v1/transfers", { body: described })
    expect(single.status, single.text).toBe(200)
    expect(single.text).toBe((await platform.request("GET", `/v1/transfers/${single.body.id}`)).text)
    const response = await batch({ transfers: [described, book(a.financial_account_id, b.financial_account_id, 1_000)] })
    expect(response.status, response.text).toBe(200)
    const [posted, refused] = response.body.data
    expect(JSON.stringify(posted)).toBe((await platform.request("GET", `/v1/transfers/${posted.id}`)).text)
    const alone = await platform.request("POST", "/v1/transfers", { body: book(a.financial_account_id, b.financial_account_id, 1_000) })
    expect(Object.keys(refused)).toEqual(["error"])
    expect(Object.entries(refused.error).map(([key]) => key)).toEqual(Object.keys(alone.body.error))
    expect({ ...refused.error, request_id: null }).toEqual({ ...alone.body.error, request_id: null })
  })

  it("writes one balance.updated per wallet account it moves, the account as the whole batch leaves it", async () => {
    const [a, b, c] = [await createWallet(platform, "A"), await createWallet(platform, "B"), await createWallet(platform, "C")]
    const accounts = [a.financial_account_id, b.financial_account_id, c.financial_account_id]
    await fund(platform, accounts[0]!, 100)
    const balanceEvents = async () => {
      const ids = new Set<string>()
      for (let after: string | undefined; ; ) {
        const page = await platform.request(
          "GET",
          `/v1/events?type=balance.updated&page_size=100${after === undefined ? "" : `&starting_after=${after}`}`
        )
        expect(page.status, page.text).toBe(200)
        for (const event of page.body.data) if (accounts.includes(event.data.object.id)) ids.add(JSON.stringify(event))
        if (!page.body.has_more) return ids
        after = page.body.data.at(-1).id
      }
    }
    const before = await balanceEvents()
    const response = await batch({
      transfers: [
        book(accounts[0]!, accounts[1]!, 10),
        book(accounts[1]!, accounts[2]!, 3),
        book(accounts[0]!, accounts[2]!, 5),
        book(accounts[2]!, accounts[0]!, 1),
        book(accounts[0]!, accounts[1]!, 1_000) // refused: moves nothing
      ]
    })
    expect(response.status, response.text).toBe(200)
    const written = [...(await balanceEvents())].filter((event) => !before.has(event)).map((event) => JSON.parse(event).data.object)
    expect(written.map((object) => object.id).sort()).toEqual([...accounts].sort())
    for (const object of written) {
      expect(object).toEqual((await platform.request("GET", `/v1/financial-accounts/${object.id}`)).body)
    }
    expect(written.find((object) => object.id === accounts[0])).toMatchObject({ balance: { amount: 86 } })
  })

  it("atomic: the first failing item fails the request, naming it, and nothing of the batch is written", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    await fund(platform, a.financial_account_id, 50)
    const refused = await batch({
      atomic: true,
      transfers: [book(a.financial_account_id, b.financial_account_id, 40), book(a.financial_account_id, b.financial_account_id, 40)]
    })
    expectEnvelope(refused, 422, { code: "insufficient_funds", param: "transfers.1.amount" })
    const malformed = await batch({ atomic: true, transfers: [book(a.financial_account_id, b.financial_account_id, 1), { amount: "x" }] })
    expectEnvelope(malformed, 400, { code: "invalid_request", param: "transfers.1.amount" })
    expect(await balanceOf(platform, a.financial_account_id)).toBe(50)
    expect(await balanceOf(platform, b.financial_account_id)).toBe(0)
    expect(await transfersOf(a.financial_account_id)).toBe(1) // the funding only

    const posted = await batch({
      atomic: true,
      transfers: [book(a.financial_account_id, b.financial_account_id, 20), book(b.financial_account_id, a.financial_account_id, 5)]
    })
    expect(posted.status, posted.text).toBe(200)
    expect(posted.body.data.map((item: any) => item.amount)).toEqual([20, 5])
    expect(await balanceOf(platform, a.financial_account_id)).toBe(35)
  })

  it("bounds a batch to 1 to 1,000 items and validates its shape", async () => {
    expectEnvelope(await batch({ transfers: [] }), 400, { code: "invalid_request", param: "transfers" })
    expectEnvelope(await batch({}), 400, { param: "transfers" })
    expectEnvelope(await batch({ transfers: [{}], atomic: "yes" }), 400, { param: "atomic" })
    const a = await createWallet(platform, "A")
    const tooMany = Array.from({ length: 1_001 }, () => book(a.financial_account_id, uuid(), 1))
    expectEnvelope(await batch({ transfers: tooMany }), 400, { param: "transfers" })
    expect(await transfersOf(a.financial_account_id)).toBe(0)
  })

  it("tells an item that is not an object what it must be, briefly, naming the item", async () => {
    const notObjects = [42, "x", null, [1]]
    const answered = await batch({ transfers: notObjects })
    expect(answered.status, answered.text).toBe(200)
    for (const item of answered.body.data) {
      expect(item.error).toMatchObject({ code: "invalid_request", param: null })
      expect(item.error.message).toBe("Invalid request: must be a transfer object, as the body of POST /v1/transfers")
    }
    const atomic = expectEnvelope(await batch({ atomic: true, transfers: [42] }), 400, { code: "invalid_request", param: "transfers.0" })
    expect(atomic.message.length).toBeLessThan(100)
  })

  it("takes one Idempotency-Key for the whole batch: the same request replays, another is 409", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    await fund(platform, a.financial_account_id, 10)
    const key = uuid()
    const body = {
      transfers: [book(a.financial_account_id, b.financial_account_id, 4), book(a.financial_account_id, b.financial_account_id, 4)]
    }
    const first = await batch(body, { idempotencyKey: key })
    expect(first.status, first.text).toBe(200)
    const again = await batch(body, { idempotencyKey: key })
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expectEnvelope(await batch({ transfers: [book(a.financial_account_id, b.financial_account_id, 1)] }, { idempotencyKey: key }), 409, {
      code: "conflict"
    })
    expect(await balanceOf(platform, a.financial_account_id)).toBe(2)
  })

  it("lets exactly 100 of 200 transfers through an account funded for 100, across concurrent batches", async () => {
    const source = await createWallet(platform, "Source")
    const target = await createWallet(platform, "Target")
    await fund(platform, source.financial_account_id, 100)
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        batch(
          { transfers: Array.from({ length: 20 }, () => book(source.financial_account_id, target.financial_account_id, 1)) },
          index % 2 === 0 ? { idempotencyKey: uuid() } : {}
        )
      )
    )
    const items = responses.flatMap((response) => {
      expect(response.status, response.text).toBe(200)
      return response.body.data
    })
    expect(items.filter((item: any) => item.object === "transfer")).toHaveLength(100)
    const refused = items.filter((item: any) => item.error !== undefined)
    expect(refused).toHaveLength(100)
    expect(refused.every((item: any) => item.error.code === "insufficient_funds")).toBe(true)
    expect(await balanceOf(platform, source.financial_account_id)).toBe(0)
    expect(await balanceOf(platform, target.financial_account_id)).toBe(100)
  })

  it("keeps every balance exact under concurrent batches, atomic batches and single transfers over the same accounts", async () => {
    const accounts = await Promise.all(["P", "Q", "R"].map(async (name) => (await createWallet(platform, name)).financial_account_id))
    for (const account of accounts) await fund(platform, account, 50)
    // Small balances and many debits: plenty of refusals, each decided over what the others left.
    const random = (n: number) => Math.floor(Math.random() * n)
    const move = () => {
      const from = random(3)
      const to = (from + 1 + random(2)) % 3
      return { from: accounts[from]!, to: accounts[to]!, amount: 1 + random(12) }
    }
    type Move = ReturnType<typeof move>
    const sent: Array<Promise<{ moves: ReadonlyArray<Move>; posted: ReadonlyArray<boolean> }>> = []
    for (let round = 0; round < 6; round++) {
      for (const atomic of [false, false, true]) {
        const moves = Array.from({ length: atomic ? 3 : 25 }, move)
        sent.push(
          batch({ transfers: moves.map((m) => book(m.from, m.to, m.amount)), ...(atomic ? { atomic } : {}) }).then((response) => {
            if (atomic && response.status === 422) {
              expect(response.body.error.code, response.text).toBe("insufficient_funds")
              return { moves, posted: moves.map(() => false) }
            }
            expect(response.status, response.text).toBe(200)
            return {
              moves,
              posted: response.body.data.map((item: any) => {
                if (item.error !== undefined) expect(item.error.code).toBe("insufficient_funds")
                return item.object === "transfer"
              })
            }
          })
        )
      }
      for (let single = 0; single < 5; single++) {
        const m = move()
        sent.push(
          transfer(platform, {
            paymentRail: "book",
            amount: m.amount,
            from_financial_account_id: m.from,
            to_financial_account_id: m.to
          }).then((response) => {
            if (response.status !== 200) expect(response.body.error.code, response.text).toBe("insufficient_funds")
            return { moves: [m], posted: [response.status === 200] }
          })
        )
      }
    }
    const expected = new Map(accounts.map((account) => [account, 50]))
    for (const { moves, posted } of await Promise.all(sent)) {
      moves.forEach((m, i) => {
        if (!posted[i]) return
        expected.set(m.from, expected.get(m.from)! - m.amount)
        expected.set(m.to, expected.get(m.to)! + m.amount)
      })
    }
    for (const account of accounts) {
      expect(expected.get(account)).toBeGreaterThanOrEqual(0)
      expect(await balanceOf(platform, account)).toBe(expected.get(account))
    }
  })

  it.runIf(kind === "sqlite")("honours a balance another process's connection moved while a batch waited for the write lock", async () => {
    const a = (await createWallet(platform, "A")).financial_account_id
    const b = (await createWallet(platform, "B")).financial_account_id
    await fund(platform, a, 100)
    // Another process takes 70 of A's 100 and holds the write lock until told to commit…
    const other = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require("better-sqlite3"))(process.argv[1])
         db.exec("BEGIN IMMEDIATE")
         db.prepare("UPDATE issuing_balances SET debits_minor = debits_minor + 70 WHERE financial_account_id = ? AND book = 'principal'").run(process.argv[2])
         process.stdout.write("locked\\n")
         process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0) })`,
        platform.database.filename!,
        a
      ],
      { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] }
    )
    try {
      await new Promise<void>((resolve, reject) => {
        other.stdout!.once("data", () => resolve())
        other.once("exit", (code) => reject(new Error(`the other process exited with ${code}`)))
      })
      // …while a batch reads A's committed 100 and waits for the lock to write a debit of 60.
      const pending = batch({ transfers: [book(a, b, 60)] })
      // The race happens before the other process commits: the batch is inside its write, which
      // holds the process's write gate from its read of the balances until its job is answered —
      // a probe asking for the gate is seen parked (while the other process holds SQLite's lock,
      // the batch cannot have finished). A probe that gets the gate at once came before the batch.
      let settled = false
      void pending.finally(() => (settled = true))
      const runtime = platform.instance.runtime
      for (const deadline = Date.now() + 20_000; ; ) {
        expect(settled, "the batch was answered while the other process held the lock").toBe(false)
        const probe = runtime.runFork(Effect.flatMap(SqliteWriter, (writer) => Effect.exit(writer.withGate(Effect.void))))
        const status = await runtime.runPromise(Fiber.status(probe))
        if (status._tag === "Suspended") break
        await runtime.runPromise(Fiber.await(probe))
        if (Date.now() > deadline) throw new Error("the batch never took the write gate")
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const exited = new Promise((resolve) => other.once("exit", resolve))
      other.stdin!.write("commit\n")
      expect(await exited).toBe(0)
      const response = await pending
      expect(response.status, response.text).toBe(200)
      expect(response.body.data[0].error).toMatchObject({ code: "insufficient_funds" })
    } finally {
      other.kill("SIGKILL")
    }
    expect(await balanceOf(platform, a)).toBe(30)
    expect(await balanceOf(platform, b)).toBe(0)
    expect(await transfersOf(b)).toBe(0)
  })
})
