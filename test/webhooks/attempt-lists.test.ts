import { type WebhookAttemptOrderField, WebhookStore } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectListed, inListOrder, type ListedRow } from "../support/lists.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

/**
 * `GET /v1/webhook-attempts` with every filter and order (docs/operations.md#volume): `status` is
 * one range of an index holding it before the order column, and the list without it the merge of
 * both statuses' ranges — the same rows in the same order, with the same total, as the program's
 * attempts filtered and sorted here, by page and by starting_after; each read through its index in
 * order, never sorted.
 */
describe.each(STORE_KINDS)("webhook attempts' filters and orders on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let subscriptions: Array<string>
  let attempts: Array<ListedRow>

  beforeAll(async () => {
    platform = await startPlatform(kind)
    receiver = await startReceiver()
    // Every third try fails: the statuses interleave in time.
    let replies = 0
    receiver.reply = () => (++replies % 3 === 0 ? { status: 500, body: "no" } : { status: 200, body: "ok" })
    subscriptions = []
    for (const name of ["a", "b"]) {
      const created = await platform.request("POST", "/v1/webhook-subscriptions", {
        body: { url: `${receiver.url}/${name}`, event_types: ["wallet.created"] }
      })
      expect(created.status, created.text).toBe(200)
      subscriptions.push(created.body.id)
    }
    for (let index = 0; index < 11; index += 1) {
      const sent = await platform.request("POST", `/v1/webhook-subscriptions/${subscriptions[index % 3 === 0 ? 1 : 0]}/test`)
      expect(sent.status, sent.text).toBe(200)
    }
    const listed = await platform.request("GET", "/v1/webhook-attempts?page_size=100")
    expect(listed.status, listed.text).toBe(200)
    attempts = listed.body.data
    expect(attempts).toHaveLength(11)
    expect(new Set(attempts.map((row) => row.status))).toEqual(new Set(["SUCCESS", "FAILED"]))
  })
  afterAll(async () => {
    await platform?.close()
    await receiver?.close()
  })

  const filtersOf = () => {
    const event = attempts.find((row) => row.status === "FAILED")!.event_id as string
    return [
      "",
      "status=SUCCESS",
      "status=FAILED",
      `webhook_subscription_id=${subscriptions[0]}`,
      `webhook_subscription_id=${subscriptions[0]}&status=FAILED`,
      `webhook_subscription_id=${subscriptions[1]}&status=SUCCESS`,
      `event_id=${event}`,
      `event_id=${event}&status=FAILED`,
      `event_id=${event}&status=SUCCESS`
    ]
  }

  it("lists, pages and walks exactly the attempts of each filter, in each order", async () => {
    for (const filter of filtersOf()) {
      const wanted = new URLSearchParams(filter)
      const rows = attempts.filter(
        (row) =>
          (wanted.get("status") ?? row.status) === row.status &&
          (wanted.get("webhook_subscription_id") ?? row.webhook_subscription_id) === row.webhook_subscription_id &&
          (wanted.get("event_id") ?? row.event_id) === row.event_id
      )
      for (const field of ["created_at", "attempted_at"]) {
        for (const ascending of [false, true]) {
          const query = [filter, `order_by=${field}&ascending=${ascending}`].filter((part) => part !== "").join("&")
          await expectListed(platform, "/v1/webhook-attempts", query, inListOrder(rows, field, ascending))
        }
      }
    }
  })

  it("refuses a starting_after that is not an attempt of the list with these filters", async () => {
    const other = attempts.find((row) => row.webhook_subscription_id === subscriptions[1])!
    const failed = attempts.find((row) => row.status === "FAILED" && row.webhook_subscription_id === subscriptions[0])!
    for (const query of [
      `webhook_subscription_id=${subscriptions[0]}&starting_after=${other.id}`,
      `webhook_subscription_id=${subscriptions[0]}&status=SUCCESS&starting_after=${failed.id}`,
      "starting_after=00000000-0000-7000-8000-000000000000"
    ]) {
      expectEnvelope(await platform.request("GET", `/v1/webhook-attempts?${query}`), 400, { param: "starting_after" })
    }
    const stranger = await platform.createOrganization("Stranger")
    const theirs = await platform.request("GET", `/v1/webhook-attempts?starting_after=${attempts[0]!.id}`, {
      key: stranger.api_key,
      program: stranger.program_id
    })
    expectEnvelope(theirs, 400, { param: "starting_after" })
    for (const query of [
      "page=2&page_size=2",
      `webhook_subscription_id=${subscriptions[0]}`,
      `webhook_subscription_id=${subscriptions[0]}&status=SUCCESS`
    ]) {
      const none = await platform.request("GET", `/v1/webhook-attempts?${query}`, {
        key: stranger.api_key,
        program: stranger.program_id
      })
      expect(none.body, query).toEqual({ data: [], total_count: 0, has_more: false })
    }
  })

  it("reads every filter and order but the event's through one index in order, never sorted", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, WebhookAttemptOrderField, string]> = [
      [{}, "created_at", "issuing_webhook_attempts_by_status"],
      [{}, "attempted_at", "issuing_webhook_attempts_by_status_attempt"],
      [{ status: "FAILED" }, "created_at", "issuing_webhook_attempts_by_status"],
      [{ status: "FAILED" }, "attempted_at", "issuing_webhook_attempts_by_status_attempt"],
      [{ webhook_subscription_id: subscriptions[0]! }, "created_at", "issuing_webhook_attempts_by_subscription"],
      [{ webhook_subscription_id: subscriptions[0]! }, "attempted_at", "issuing_webhook_attempts_by_subscription_attempt"],
      [{ webhook_subscription_id: subscriptions[0]!, status: "FAILED" }, "created_at", "issuing_webhook_attempts_by_subscription"],
      [{ webhook_subscription_id: subscriptions[0]!, status: "FAILED" }, "attempted_at", "issuing_webhook_attempts_by_subscription_attempt"]
    ]
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      for (const [filter, orderBy, index] of cases) {
        const first = attempts.find(
          (row) =>
            (filter.status ?? row.status) === row.status &&
            (filter.webhook_subscription_id ?? row.webhook_subscription_id) === row.webhook_subscription_id
        )!
        for (const [offset, after] of [
          [0, null],
          [3, null],
          [0, first.id]
        ] as const) {
          const statements: Array<Compiled> = []
          await platform.instance.runtime.runPromise(
            Effect.flatMap(WebhookStore, (store) =>
              store.listAttempts(platform.org.program_id, filter as any, { orderBy, descending: true, limit: 3, offset, after })
            ).pipe((effect) => recording(effect, statements))
          )
          const label = `${JSON.stringify(filter)} by ${orderBy} from ${offset} after ${after}`
          const ranged = statements.filter(([text]) => text.includes("LIMIT"))
          expect(ranged, label).toHaveLength(1)
          const merged = filter.status === undefined
          expect(ranged[0]![0].includes("UNION ALL"), label).toBe(merged)
          // A subscription's ranges hold no program (migration 0450): read from its index alone,
          // seeking the subscription and the status, the page's rows then read by id.
          const bySubscription = filter.webhook_subscription_id !== undefined
          // A deep page of one range counts the skipped rows off the index in a subquery and sorts
          // only the page's rows it then reads (pageRows): that one sort, of a page, is allowed.
          const pageSorted = !merged && !bySubscription && offset > 0
          if (db !== undefined) {
            const plan = sqlitePlan(db, ranged[0]!)
            expect(plan, label).toContain(
              bySubscription
                ? `USING COVERING INDEX ${index} (subscription_id=? AND status=?`
                : `USING ${merged || pageSorted ? "COVERING " : ""}INDEX ${index} (`
            )
            expect(plan.split("TEMP B-TREE").length - 1, `${label}: ${plan}`).toBe(pageSorted ? 1 : 0)
            if (merged) expect(plan, label).toContain("MERGE (UNION ALL)")
          } else {
            const plan = await pgPlan(platform.instance.runtime, ranged[0]!)
            expect(plan, label).toContain(` using ${index} `)
            if (bySubscription) {
              expect(plan, label).toContain(`Index Only Scan Backward using ${index} `)
              expect(plan, label).not.toContain("Filter:")
            }
            if (pageSorted) expect(pgSorts(plan.split(" | ").slice(1).join(" | ")), `${label}: ${plan}`).toBe(false)
            else expect(pgSorts(plan), `${label}: ${plan}`).toBe(false)
            if (merged) expect(plan, label).toMatch(/Merge Append/)
          }
        }
      }
    } finally {
      db?.close()
    }
  })
})
