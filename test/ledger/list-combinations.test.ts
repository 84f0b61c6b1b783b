import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { expectListed } from "../support/lists.js"
import { createWallet, fund, transfer } from "./support.js"

interface Row {
  readonly id: string
  readonly status: string
  readonly amount: number
  readonly created_at: string
  readonly updated_at: string
  readonly payment_rail?: string
  readonly from_financial_account_id?: string | null
  readonly to_financial_account_id?: string | null
  readonly card_id?: string | null
}

type Field = "created_at" | "updated_at"

/** The rows in the list's order: the field, then id, both in the direction asked (docs/api.md#paging). */
const ordered = (rows: ReadonlyArray<Row>, field: Field, ascending: boolean) =>
  [...rows]
    .sort((x, y) => {
      const [a, b] = [x[field], y[field]]
      const byField = a < b ? -1 : a > b ? 1 : 0
      const order = byField !== 0 ? byField : x.id < y.id ? -1 : x.id > y.id ? 1 : 0
      return ascending ? order : -order
    })
    .map((row) => row.id)

/**
 * Every filter and order combination of `GET /v1/transfers` and `GET /v1/transactions` that reads
 * ranges merged (migration 0400, docs/operations.md#volume): each lists exactly the program's rows
 * with those filters, in the order's field then id, with an exact total,
 * the same by `page=` and by `starting_after`; and its plan reads index ranges in order, never a
 * sort and never the program's other index walked for a filter.
 */
describe.each(STORE_KINDS)("transfer and transaction list combinations on %s", (kind) => {
  let platform: TestPlatform
  let a: string
  let b: string
  let c: string
  const cards: Array<string> = []

  beforeAll(async () => {
    platform = await startPlatform(kind)
    const walletA = await createWallet(platform, "A")
    const walletB = await createWallet(platform, "B")
    a = walletA.financial_account_id
    b = walletB.financial_account_id
    c = (await createWallet(platform, "C")).financial_account_id
    await fund(platform, a, 100_000)
    await fund(platform, b, 100_000)
    // Book transfers with repeated amounts (ties broken by id), outbound wires and ACH transfers
    // that stay PENDING, and ACH transfers settled later (their updated_at moves past the others').
    const moves: Array<[string, string, number]> = [
      [a, b, 7],
      [b, a, 7],
      [b, c, 3],
      [a, c, 7],
      [c, a, 2],
      [b, c, 3],
      [a, b, 11]
    ]
    for (const [from, to, amount] of moves) {
      const moved = await transfer(platform, { paymentRail: "book", amount, from_financial_account_id: from, to_financial_account_id: to })
      expect(moved.status, moved.text).toBe(200)
    }
    const pending: Array<string> = []
    for (const [rail, from, amount] of [
      ["wire", a, 5],
      ["ach_same_day", a, 7],
      ["ach_same_day", b, 4],
      ["wire", b, 7],
      ["ach_same_day", a, 3]
    ] as const) {
      const sent = await transfer(platform, { paymentRail: rail, amount, from_financial_account_id: from })
      expect(sent.status, sent.text).toBe(200)
      expect(sent.body.status).toBe("PENDING")
      pending.push(sent.body.id)
    }
    for (const id of [pending[1]!, pending[2]!]) {
      const settled = await platform.request("POST", `/v1/simulate/transfers/${id}/settle`)
      expect(settled.status, settled.text).toBe(200)
    }
    // Returned by their rail (docs/ledger.md#returns): a settled ACH transfer and a pending wire,
    // each with its reversing transfer, SETTLED, back into b.
    for (const [id, code] of [
      [pending[2]!, "R01"],
      [pending[3]!, "Account closed"]
    ]) {
      const returned = await platform.request("POST", `/v1/network/transfers/${id}/return`, { body: { return_code: code } })
      expect(returned.status, returned.text).toBe(200)
    }
    // Card transactions of two cards: held (PENDING), cleared (SETTLED), reversed (VOIDED), declined.
    for (const wallet of [walletA, walletB]) cards.push((await issueCard(platform, (wallet as any).id)).id)
    const authorize = async (card: string, amount: number) => {
      const response = await platform.request("POST", "/v1/simulate/authorizations", { body: { mcc: "5411", card_id: card, amount } })
      expect(response.status, response.text).toBe(200)
      return response.body as { id: string; status: string }
    }
    for (const [index, card] of cards.entries()) {
      const held = [await authorize(card, 40), await authorize(card, 25), await authorize(card, 40), await authorize(card, 10 + index)]
      const cleared = await platform.request("POST", `/v1/simulate/transactions/${held[0]!.id}/clearing`, { body: {} })
      expect(cleared.status, cleared.text).toBe(200)
      const reversed = await platform.request("POST", `/v1/simulate/transactions/${held[1]!.id}/reversal`, { body: { amount: 25 } })
      expect(reversed.status, reversed.text).toBe(200)
      expect((await authorize(card, 10_000_000)).status).toBe("DECLINED")
    }
  })
  afterAll(async () => {
    await platform?.close()
  })

  const get = async (path: string, query: string) => {
    const response = await platform.request("GET", `${path}?${query}`)
    expect(response.status, `${path}?${query}: ${response.text}`).toBe(200)
    return response.body as { data: Array<Row>; total_count: number }
  }

  /** The list with `filter` in `field` order both ways: whole, by page, by starting_after. */
  const expectList = async (path: string, all: ReadonlyArray<Row>, filter: string, keep: (row: Row) => boolean, field: Field) => {
    for (const ascending of [false, true]) {
      const query = `${filter}${filter === "" ? "" : "&"}order_by=${field}&ascending=${ascending}`
      await expectListed(platform, path, query, ordered(all.filter(keep), field, ascending))
    }
  }

  it("lists the program's transfers with status, rail or both, and an account's, in every order", async () => {
    const all = (await get("/v1/transfers", "page_size=100")).data
    // 2 fundings, 7 book transfers, 5 sent out (2 of them settled, 2 returned), 2 returns' reversals, 2 card clearings.
    expect(all).toHaveLength(18)
    expect(all.filter((row) => row.status === "RETURNED")).toHaveLength(2)
    expect(new Set(all.map((row) => row.amount)).size).toBeLessThan(all.length)
    expect(all.some((row) => row.updated_at !== row.created_at)).toBe(true)
    const filters: ReadonlyArray<[string, (row: Row) => boolean]> = [
      ["", () => true],
      ["status=PENDING", (row) => row.status === "PENDING"],
      ["status=SETTLED", (row) => row.status === "SETTLED"],
      ["payment_rail=ach_same_day", (row) => row.payment_rail === "ach_same_day"],
      ["payment_rail=card", (row) => row.payment_rail === "card"],
      ["status=PENDING&payment_rail=card", () => false],
      ["status=SETTLED&payment_rail=ach_same_day", (row) => row.status === "SETTLED" && row.payment_rail === "ach_same_day"],
      ["status=PENDING&payment_rail=wire", (row) => row.status === "PENDING" && row.payment_rail === "wire"],
      ["status=RETURNED", (row) => row.status === "RETURNED"],
      ["status=RETURNED&payment_rail=wire", (row) => row.status === "RETURNED" && row.payment_rail === "wire"],
      ["status=RETURNED&payment_rail=book", () => false],
      [`financial_account_id=${a}`, (row) => row.from_financial_account_id === a || row.to_financial_account_id === a],
      [
        `financial_account_id=${a}&status=PENDING`,
        (row) => (row.from_financial_account_id === a || row.to_financial_account_id === a) && row.status === "PENDING"
      ],
      [
        `financial_account_id=${b}&status=SETTLED`,
        (row) => (row.from_financial_account_id === b || row.to_financial_account_id === b) && row.status === "SETTLED"
      ],
      [
        `financial_account_id=${a}&payment_rail=book`,
        (row) => (row.from_financial_account_id === a || row.to_financial_account_id === a) && row.payment_rail === "book"
      ],
      // An account's transfers of a rail, with and without a status (migration 0450): each is its ranges alone.
      [`financial_account_id=${a}&payment_rail=wire`, (row) => row.from_financial_account_id === a && row.payment_rail === "wire"],
      [
        `financial_account_id=${b}&status=PENDING&payment_rail=wire`,
        (row) => row.from_financial_account_id === b && row.status === "PENDING" && row.payment_rail === "wire"
      ],
      [
        `financial_account_id=${a}&status=SETTLED&payment_rail=ach_same_day`,
        (row) => row.from_financial_account_id === a && row.status === "SETTLED" && row.payment_rail === "ach_same_day"
      ],
      [`financial_account_id=${c}&payment_rail=card`, () => false],
      [
        `financial_account_id=${b}&status=RETURNED`,
        (row) => (row.from_financial_account_id === b || row.to_financial_account_id === b) && row.status === "RETURNED"
      ]
    ]
    for (const [filter, keep] of filters) {
      for (const field of ["updated_at", "created_at"] as const) await expectList("/v1/transfers", all, filter, keep, field)
    }
  })

  it("lists the program's transactions with a status or a card, in every order", async () => {
    const all = (await get("/v1/transactions", "page_size=100")).data
    expect(new Set(all.map((row) => row.status))).toEqual(new Set(["PENDING", "SETTLED", "VOIDED", "DECLINED"]))
    const filters: ReadonlyArray<[string, (row: Row) => boolean]> = [
      ["", () => true],
      ["status=SETTLED", (row) => row.status === "SETTLED"],
      ["status=VOIDED", (row) => row.status === "VOIDED"],
      ["status=EXPIRED", () => false],
      [`card_id=${cards[0]}`, (row) => row.card_id === cards[0]],
      [`card_id=${cards[1]}&status=PENDING`, (row) => row.card_id === cards[1] && row.status === "PENDING"],
      [`card_id=${cards[0]}&status=SETTLED`, (row) => row.card_id === cards[0] && row.status === "SETTLED"],
      [`card_id=${cards[0]}&status=VOIDED`, (row) => row.card_id === cards[0] && row.status === "VOIDED"],
      [`card_id=${cards[1]}&status=DECLINED`, (row) => row.card_id === cards[1] && row.status === "DECLINED"],
      [`card_id=${cards[1]}&status=EXPIRED`, () => false]
    ]
    for (const [filter, keep] of filters) {
      for (const field of ["updated_at", "created_at"] as const) await expectList("/v1/transactions", all, filter, keep, field)
    }
  })

  it("refuses a starting_after outside the list with these filters, and lists nothing of another program", async () => {
    const transfers = (await get("/v1/transfers", "page_size=100")).data
    const settledBook = transfers.find((row) => row.status === "SETTLED" && row.payment_rail === "book")!
    const transactions = (await get("/v1/transactions", "page_size=100")).data
    const onCard1 = transactions.find((row) => row.card_id === cards[1] && row.status !== "DECLINED")!
    const settled = transactions.find((row) => row.status === "SETTLED")!
    for (const [path, query] of [
      ["/v1/transfers", `order_by=updated_at&status=PENDING&starting_after=${settledBook.id}`],
      ["/v1/transfers", `order_by=updated_at&payment_rail=wire&starting_after=${settledBook.id}`],
      ["/v1/transfers", `order_by=updated_at&financial_account_id=${c}&status=PENDING&starting_after=${settledBook.id}`],
      ["/v1/transfers", "order_by=updated_at&starting_after=00000000-0000-7000-8000-000000000000"],
      ["/v1/transfers", `financial_account_id=${a}&payment_rail=wire&starting_after=${settledBook.id}`],
      ["/v1/transactions", `order_by=updated_at&card_id=${cards[0]}&starting_after=${onCard1.id}`],
      ["/v1/transactions", `card_id=${cards[1]}&status=DECLINED&starting_after=${onCard1.id}`],
      ["/v1/transactions", `order_by=updated_at&status=PENDING&starting_after=${settled.id}`]
    ] as const) {
      expectEnvelope(await platform.request("GET", `${path}?${query}`), 400, { param: "starting_after" })
    }
    const stranger = await platform.createOrganization("Stranger")
    for (const [path, query] of [
      ["/v1/transfers", `order_by=updated_at&financial_account_id=${a}`],
      ["/v1/transfers", `order_by=updated_at&financial_account_id=${a}&page=2&page_size=2`],
      ["/v1/transfers", "order_by=updated_at&status=SETTLED"],
      ["/v1/transactions", `order_by=updated_at&card_id=${cards[0]}`],
      ["/v1/transactions", "order_by=updated_at"]
    ] as const) {
      const response = await platform.request("GET", `${path}?${query}`, { key: stranger.api_key, program: stranger.program_id })
      expect(response.status, response.text).toBe(200)
      expect(response.body).toEqual({ data: [], total_count: 0, has_more: false })
    }
    expectEnvelope(
      await platform.request("GET", `/v1/transfers?order_by=updated_at&financial_account_id=${a}&starting_after=${settledBook.id}`, {
        key: stranger.api_key,
        program: stranger.program_id
      }),
      400,
      { param: "starting_after" }
    )
  })

  it("reads each combination as index ranges in its order, never sorted, never another index walked", async () => {
    const statements: Array<Compiled> = []
    const run = (effect: Effect.Effect<unknown, unknown, Ledger>) =>
      platform.instance.runtime.runPromise(recording(effect, statements) as Effect.Effect<unknown, unknown, never>)
    const page = (orderBy: Field, page: number) => ({ page, pageSize: 3, orderBy, ascending: false })
    // [filter, order, the index each range reads, how many ranges, how many equalities each range
    // seeks on: every filter, so no range reads a row it then drops]. An account's transfers
    // without a rail: page 1 merges every (side, status, rail) range; page 2 probes them first and
    // merges those holding a transfer.
    const PROBED = -1
    // An account's ranges without a rail: per side, one per (status, rail) a transfer can have —
    // SETTLED on each of the 5 rails, PENDING and RETURNED on ach_same_day and wire only.
    const accountRanges = (filter: Record<string, string>) => 2 * (filter.status === undefined ? 9 : filter.status === "SETTLED" ? 5 : 2)
    const transfers = (await get("/v1/transfers", "page_size=100")).data
    const heldRanges = (filter: Record<string, string>) =>
      new Set(
        transfers.flatMap((row) =>
          (["from", "to"] as const)
            .filter((side) => row[`${side}_financial_account_id`] === filter.financial_account_id)
            .filter(() => (filter.status ?? row.status) === row.status)
            .map((side) => `${side} ${row.status} ${row.payment_rail}`)
        )
      ).size
    const transferCases: ReadonlyArray<[Record<string, string>, Field, string, number, number]> = [
      [{}, "updated_at", "issuing_transfers_by_status_rail_update", 9, 3],
      [{ status: "PENDING" }, "created_at", "issuing_transfers_by_status_rail", 2, 3],
      [{ payment_rail: "wire" }, "created_at", "issuing_transfers_by_status_rail", 3, 3],
      [{ status: "PENDING", payment_rail: "wire" }, "created_at", "issuing_transfers_by_status_rail", 1, 3],
      [{ payment_rail: "book" }, "updated_at", "issuing_transfers_by_status_rail_update", 1, 3],
      [{ status: "RETURNED" }, "updated_at", "issuing_transfers_by_status_rail_update", 2, 3],
      [{ financial_account_id: a }, "created_at", "issuing_transfers_by_(from|to)_status_rail", PROBED, 3],
      [{ financial_account_id: a }, "updated_at", "issuing_transfers_by_(from|to)_status_rail_update", PROBED, 3],
      [{ financial_account_id: a, status: "PENDING" }, "created_at", "issuing_transfers_by_(from|to)_status_rail", PROBED, 3],
      [{ financial_account_id: b, status: "RETURNED" }, "created_at", "issuing_transfers_by_(from|to)_status_rail", PROBED, 3],
      [{ financial_account_id: a, payment_rail: "wire" }, "created_at", "issuing_transfers_by_(from|to)_status_rail", 6, 3],
      [{ financial_account_id: a, payment_rail: "ach_same_day" }, "updated_at", "issuing_transfers_by_(from|to)_status_rail_update", 6, 3],
      [
        { financial_account_id: a, status: "SETTLED", payment_rail: "book" },
        "updated_at",
        "issuing_transfers_by_(from|to)_status_rail_update",
        2,
        3
      ]
    ]
    const transactionCases: ReadonlyArray<[Record<string, string>, Field, string, number, number]> = [
      [{}, "updated_at", "issuing_transactions_by_status_update", 5, 2],
      [{ status: "SETTLED" }, "updated_at", "issuing_transactions_by_status_update", 1, 2],
      [{ card_id: cards[0]! }, "updated_at", "issuing_transactions_by_card_status_update", 5, 2],
      [{ card_id: cards[0]! }, "created_at", "issuing_transactions_by_card_status", 5, 2],
      [{ card_id: cards[0]!, status: "SETTLED" }, "created_at", "issuing_transactions_by_card_status", 1, 2],
      [{ card_id: cards[0]!, status: "VOIDED" }, "updated_at", "issuing_transactions_by_card_status_update", 1, 2]
    ]
    const cases = [
      ...transferCases.map((c) => ["transfers", ...c] as const),
      ...transactionCases.map((c) => ["transactions", ...c] as const)
    ]
    const checked: Array<[Compiled, string, number, number]> = []
    const probed: Array<[Compiled, number]> = []
    // Either of an account's two indexes serves a probe (each starts with the side, status and rail).
    const probeIndex = "issuing_transfers_by_(from|to)_status_rail(_update)?"
    for (const [list, filter, field, index, ranges, equalities] of cases) {
      for (const number of [1, 2]) {
        statements.length = 0
        await run(
          Effect.flatMap(Ledger, (ledger) =>
            list === "transfers"
              ? ledger.listTransfers(platform.org.program_id, filter as any, page(field, number))
              : ledger.listTransactions(platform.org.program_id, filter as any, page(field, number))
          )
        )
        const ids = statements.filter(([text]) => /SELECT \S+ AS k, \S+ AS id FROM/.test(text))
        expect(ids, JSON.stringify([list, filter, field])).toHaveLength(1)
        // Probed on a page that skips rows; page 1 merges every range (an empty one costs a seek either way).
        const probing = ranges === PROBED && number > 1
        const probes = statements.filter(([text]) => text.includes("WHERE EXISTS"))
        expect(probes, JSON.stringify([list, filter, field, number])).toHaveLength(probing ? 1 : 0)
        const held = ranges === PROBED ? (probing ? heldRanges(filter) : accountRanges(filter)) : ranges
        if (probing) expect(held, JSON.stringify(filter)).toBeGreaterThan(1)
        checked.push([ids[0]!, index, held, equalities])
        // The probe: one seek of the index per range, every filter an equality of it.
        for (const probe of probes) probed.push([probe, accountRanges(filter)])
      }
    }
    if (kind === "postgres") {
      for (const [statement, index, ranges, equalities] of checked) {
        const plan = await pgPlan(platform.instance.runtime, statement)
        expect(pgSorts(plan), plan).toBe(false)
        expect(plan).not.toMatch(/Seq Scan|Bitmap/)
        // No range reads a row to drop it: no Filter, every filter an equality of the index's condition.
        expect(plan, plan).not.toMatch(/Filter:/)
        expect(plan.match(new RegExp(`Index Only Scan Backward using ${index} `, "g")) ?? [], plan).toHaveLength(ranges)
        for (const condition of plan.match(/Index Cond: [^|]*/g) ?? []) {
          expect(condition.match(/ = /g) ?? [], condition).toHaveLength(equalities)
        }
        if (ranges > 1) expect(plan, plan).toMatch(/^Limit \| -> +Merge Append/)
      }
      for (const [statement, ranges] of probed) {
        const plan = await pgPlan(platform.instance.runtime, statement)
        expect(plan).not.toMatch(/Seq Scan|Bitmap|(^|\| )Filter:/)
        expect(plan.match(new RegExp(`Index Only Scan using ${probeIndex} `, "g")) ?? [], plan).toHaveLength(ranges)
      }
      return
    }
    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      for (const [statement, index, ranges, equalities] of checked) {
        const plan = sqlitePlan(db, statement)
        expect(plan).not.toMatch(/TEMP B-TREE|SCAN issuing/)
        // Each range read from its index alone (COVERING: no row read to be tested and dropped),
        // seeking every filter (the equalities before its order column).
        const searches = [...plan.matchAll(new RegExp(`SEARCH issuing_\\w+ USING COVERING INDEX ${index} \\(([^)]*)\\)`, "g"))]
        expect(searches, plan).toHaveLength(ranges)
        for (const search of searches) expect(search.at(-1)!.match(/\w+=\?/g) ?? [], search[0]).toHaveLength(equalities)
        if (ranges > 1) expect(plan, plan).toMatch(/^MERGE \(UNION ALL\)/)
      }
      for (const [statement, ranges] of probed) {
        const plan = sqlitePlan(db, statement)
        const seeks = plan.match(
          new RegExp(
            `SEARCH issuing_transfers EXISTS USING COVERING INDEX ${probeIndex} \\(\\w+=\\? AND status=\\? AND payment_rail=\\?\\)`,
            "g"
          )
        )
        expect(seeks ?? [], plan).toHaveLength(ranges)
        expect(plan).not.toMatch(/SCAN issuing|TEMP B-TREE/)
      }
    } finally {
      db.close()
    }
  })
})
