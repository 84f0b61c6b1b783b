import { LedgerStore, type PageWindow } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectListed, inListOrder } from "../support/lists.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

// A wallet's tag (docs/ledger.md#wallet-tags): at creation, by PATCH /v1/wallets/{wallet_id}, and
// as the filter of GET /v1/wallets, its total_count read from the maintained counts.

interface WalletBody {
  readonly id: string
  readonly tag: string | null
  readonly metadata: Record<string, string>
  readonly created_at: string
  readonly updated_at: string
  readonly [field: string]: unknown
}

describe.each(STORE_KINDS)("wallet tags on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  type As = { readonly key?: string; readonly program?: string }
  const create = (body: Record<string, unknown>, as: As = {}) =>
    platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada Lovelace" }, ...body }, ...as })
  const created = async (tag?: string | null, as: As = {}): Promise<WalletBody> => {
    const response = await create(tag === undefined ? {} : { tag }, as)
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const patch = (id: string, body: unknown, as: As = {}) => platform.request("PATCH", `/v1/wallets/${id}`, { body, ...as })
  const list = async (query: string, as: As = {}) => {
    const response = await platform.request("GET", `/v1/wallets?${query}`, as)
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<WalletBody>; total_count: number }
  }
  const eventsOf = async (type: string, walletId: string) =>
    ((await platform.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>).filter(
      (event) => event.data.object.id === walletId
    )
  /** What a refused request must leave as it was: the program's wallets and its wallet events. */
  const snapshot = async () => ({
    wallets: (await list("page_size=100")).data,
    created: (await platform.request("GET", "/v1/events?type=wallet.created&page_size=1")).body.total_count,
    updated: (await platform.request("GET", "/v1/events?type=wallet.updated&page_size=1")).body.total_count
  })

  it("takes a tag at creation (1 to 64 characters; absent or null: untagged) and shows it on every read", async () => {
    const tagged = await created("customer_1")
    expect(tagged).toMatchObject({ object: "wallet", tag: "customer_1" })
    expect((await platform.request("GET", `/v1/wallets/${tagged.id}`)).body).toEqual(tagged)
    expect((await created()).tag).toBeNull()
    expect((await created(null)).tag).toBeNull()
    const longest = "t".repeat(64)
    expect((await created(longest)).tag).toBe(longest)
    const [event] = await eventsOf("wallet.created", tagged.id)
    expect(event.data.object).toEqual(tagged)
  })

  it("refuses a malformed tag at creation with 400 param tag, writing nothing", async () => {
    const before = await snapshot()
    for (const tag of ["", "t".repeat(65), 42, ["customer_1"], { id: "customer_1" }, true]) {
      expectEnvelope(await create({ tag }), 400, { type: "invalid_request_error", code: "invalid_request", param: "tag" })
    }
    expect(await snapshot()).toEqual(before)
  })

  it("PATCH sets and clears the tag, merges metadata, emits wallet.updated in order, and answers an empty change unchanged", async () => {
    const wallet = await created(null)
    const tagged = await patch(wallet.id, { tag: "customer_2", metadata: { plan: "gold", region: "eu" } })
    expect(tagged.status, tagged.text).toBe(200)
    expect(tagged.body).toEqual({
      ...wallet,
      tag: "customer_2",
      metadata: { plan: "gold", region: "eu" },
      updated_at: tagged.body.updated_at
    })
    expect(tagged.body.updated_at >= wallet.updated_at).toBe(true)
    // Metadata merges as on cards: a key given is set, "" removes one, the others are kept; the tag is kept.
    const merged = await patch(wallet.id, { metadata: { plan: "silver", region: "" } })
    expect(merged.body).toMatchObject({ tag: "customer_2", metadata: { plan: "silver" } })
    const cleared = await patch(wallet.id, { tag: null })
    expect(cleared.body).toMatchObject({ tag: null, metadata: { plan: "silver" } })
    expect((await platform.request("GET", `/v1/wallets/${wallet.id}`)).body).toEqual(cleared.body)
    // A change that changes nothing: the wallet as it is, and no event.
    expect(await patch(wallet.id, {})).toMatchObject({ status: 200, body: cleared.body })
    expect(await patch(wallet.id, { tag: null, metadata: { plan: "silver" } })).toMatchObject({ status: 200, body: cleared.body })
    const events = await eventsOf("wallet.updated", wallet.id)
    // Newest first: each event holds the wallet as the change left it.
    expect(events.map((event) => event.data.object)).toEqual([cleared.body, merged.body, tagged.body])
    const nulled = await patch(wallet.id, { metadata: null })
    expect(nulled.body.metadata).toEqual({})
  })

  it("refuses a bad PATCH with the envelope naming the field, writing nothing", async () => {
    const wallet = await created("customer_3")
    const other = await platform.createOrganization("Other")
    const before = await snapshot()
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`k${index}`, "v"]))
    expect((await patch(wallet.id, { metadata: full })).status).toBe(200)
    const after = await snapshot()
    for (const [body, param] of [
      [{ tag: "customer_4", holder: { name: "Eve" } }, "holder"],
      [{ tag: "customer_4", currency: "EUR" }, "currency"],
      [{ tagg: "customer_4" }, "tagg"],
      [{ tag: "" }, "tag"],
      [{ tag: "t".repeat(65) }, "tag"],
      [{ tag: 7 }, "tag"],
      [{ tag: "customer_4", metadata: { one_more: "v" } }, "metadata"],
      [{ metadata: "everything" }, "metadata"]
    ] as const) {
      expectEnvelope(await patch(wallet.id, body), 400, { code: "invalid_request", param })
    }
    expectEnvelope(await patch(uuid(), { tag: "customer_4" }), 404, { param: "wallet_id" })
    expectEnvelope(await patch(wallet.id, { tag: "customer_4" }, { key: other.api_key, program: other.program_id }), 404, {
      param: "wallet_id"
    })
    const viewer = await platform.request("POST", "/v1/api-keys", { body: { name: "Viewer", role: "viewer" } })
    expect(viewer.status, viewer.text).toBe(200)
    expectEnvelope(await patch(wallet.id, { tag: "customer_4" }, { key: viewer.body.secret }), 403)
    expect(await snapshot()).toEqual(after)
    expect(after.updated).toBe(before.updated + 1)
    expect((await platform.request("GET", `/v1/wallets/${wallet.id}`)).body.tag).toBe("customer_3")
  })

  it("lists one tag's wallets in every order and page, with an exact total_count that follows a re-tag", async () => {
    const org = await platform.createOrganization("Tags")
    const as = { key: org.api_key, program: org.program_id }
    const gold: Array<WalletBody> = []
    const silver: Array<WalletBody> = []
    for (let index = 0; index < 4; index += 1) {
      gold.push(await created("gold", as))
      if (index < 2) silver.push(await created("silver", as))
      await created(null, as)
    }
    // A wallet patched later: its updated_at order differs from its created_at order.
    const touched = await patch(gold[0]!.id, { metadata: { touched: "yes" } }, as)
    gold[0] = touched.body
    // The list as the organization's key sees it: whole, by page and by starting_after, pages of 2.
    const asOrg: TestPlatform = { ...platform, request: (method, path, options) => platform.request(method, path, { ...as, ...options }) }
    const check = async (tag: string, wallets: ReadonlyArray<WalletBody>) => {
      for (const field of ["created_at", "updated_at"]) {
        for (const ascending of [false, true]) {
          await expectListed(
            asOrg,
            "/v1/wallets",
            `tag=${tag}&order_by=${field}&ascending=${ascending}`,
            inListOrder(wallets, field, ascending),
            2
          )
        }
      }
    }
    await check("gold", gold)
    await check("silver", silver)
    expect(await list("tag=bronze", as)).toEqual({ data: [], total_count: 0, has_more: false })
    expect((await list("page_size=1", as)).total_count).toBe(10)

    // Re-tagged: the wallet and its count move from gold to silver; cleared: out of both.
    const moved = await patch(gold[1]!.id, { tag: "silver" }, as)
    expect(moved.status, moved.text).toBe(200)
    expect((await patch(gold[2]!.id, { tag: null }, as)).status).toBe(200)
    await check("gold", [gold[0]!, gold[3]!])
    await check("silver", [...silver, moved.body])
    expect((await list("page_size=1", as)).total_count).toBe(10)
    // The tag of another program's wallets is not this program's.
    expect((await list("tag=gold&page_size=1")).total_count).toBe(0)

    // A starting_after outside the tag's list, and a malformed tag, are 400s naming them.
    for (const [query, param] of [
      [`tag=gold&starting_after=${silver[0]!.id}`, "starting_after"],
      [`tag=gold&order_by=updated_at&starting_after=${gold[2]!.id}`, "starting_after"],
      ["tag=", "tag"],
      [`tag=${"t".repeat(65)}`, "tag"],
      ["tags=gold", "tags"]
    ] as const) {
      expectEnvelope(await platform.request("GET", `/v1/wallets?${query}`, as), 400, { param })
    }
  })

  it("reads one tag's page as a range of its tag index, in its order: page 1 and after a row never sorted", async () => {
    const org = await platform.createOrganization("Plans")
    const wallets: Array<WalletBody> = []
    for (let index = 0; index < 5; index += 1) {
      wallets.push(await created(index % 2 === 0 ? "plan" : null, { key: org.api_key, program: org.program_id }))
    }
    const run = async (window: PageWindow<"created_at" | "updated_at">) => {
      const statements: Array<Compiled> = []
      const listed = await platform.instance.runtime.runPromise(
        recording(
          Effect.flatMap(LedgerStore, (store) => store.listWallets(org.program_id, { tag: "plan" }, window)),
          statements
        )
      )
      expect(listed.total).toBe(3)
      const read = statements.filter(([text]) => /FROM issuing_wallets/.test(text))
      return read.at(-1)!
    }
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      for (const [orderBy, index] of [
        ["created_at", "issuing_wallets_by_tag"],
        ["updated_at", "issuing_wallets_by_tag_update"]
      ] as const) {
        // Page 1, a page after a row (keyset), a deep page by number (its rows sorted, the skipped ones counted off the index).
        for (const [offset, after] of [
          [0, null],
          [0, wallets[4]!.id],
          [2, null]
        ] as const) {
          const label = `${orderBy} from ${offset} after ${after}`
          const statement = await run({ orderBy, descending: true, limit: 2, offset, after })
          const sorted = offset > 0
          if (db !== undefined) {
            const plan = sqlitePlan(db, statement)
            expect(plan, label).toMatch(new RegExp(`SEARCH issuing_wallets USING (COVERING )?INDEX ${index} \\(program_id=\\? AND tag=\\?`))
            expect(plan, `${label}: ${plan}`).not.toMatch(/SCAN issuing/)
            if (!sorted) expect(plan, `${label}: ${plan}`).not.toContain("TEMP B-TREE")
          } else {
            const plan = await pgPlan(platform.instance.runtime, statement)
            expect(plan, label).toContain(` using ${index} `)
            expect(plan, label).not.toMatch(/Seq Scan|Bitmap/)
            if (!sorted) expect(pgSorts(plan), `${label}: ${plan}`).toBe(false)
          }
        }
      }
    } finally {
      db?.close()
    }
  })
})
