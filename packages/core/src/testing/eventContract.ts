import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { EventStore } from "../events/EventStore.js"
import { newEvent } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { freshOrganization } from "./Fixtures.js"

/** Contract of the EventStore port: the outbox the webhook worker reads. */
export const eventContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("appends events and finds them only within their program", () =>
      Effect.gen(function* () {
        const events = yield* EventStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const payload = { id: newId(), object: "wallet", nested: { amount: 125, flag: true, none: null } }
        const written = newEvent(program.id, "wallet.created", new Date().toISOString(), payload)
        yield* events.append(written)
        expect(Option.getOrThrow(yield* events.find(program.id, written.id))).toEqual(written)
        expect(Option.isNone(yield* events.find(other.program.id, written.id))).toBe(true)
        expect(Option.isNone(yield* events.find(program.id, newId()))).toBe(true)
      })
    )

    it.effect("appends the events of one change together, in order, or none of them", () =>
      Effect.gen(function* () {
        const events = yield* EventStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const at = new Date().toISOString()
        // Ids made in order (UUIDv7) sort in the order the change produced them.
        const batch = (["wallet.created", "financial_account.created", "transaction.updated"] as const).map((type) =>
          newEvent(program.id, type, at, { type })
        )
        yield* events.appendAll([])
        yield* events.appendAll(batch)
        const listed = yield* events.list(program.id, {}, { orderBy: "created_at", descending: false, limit: 10, offset: 0 })
        expect(listed.rows).toEqual(batch)

        const undone = [newEvent(program.id, "card.created", at, {}), newEvent(program.id, "card.updated", at, {})]
        yield* Effect.flip(transactor.withTransaction(Effect.zipRight(events.appendAll(undone), Effect.fail("rollback" as const))))
        for (const item of undone) expect(Option.isNone(yield* events.find(program.id, item.id))).toBe(true)
      })
    )

    it.effect("lists a program's events by time then id, filtered by type, in windows that partition", () =>
      Effect.gen(function* () {
        const events = yield* EventStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const at = new Date().toISOString()
        const written = Array.from({ length: 7 }, (_, index) =>
          newEvent(program.id, index % 2 === 0 ? "card.created" : "card.updated", at, { index })
        )
        for (const item of [...written].reverse()) yield* events.append(item)
        yield* events.append(newEvent(other.program.id, "card.created", at, {}))

        const all = yield* events.list(program.id, {}, { orderBy: "created_at", descending: false, limit: 100, offset: 0 })
        expect(all.total).toBe(7)
        expect(all.rows.map((row) => row.id)).toEqual(written.map((item) => item.id).sort())

        const newestFirst = yield* events.list(
          program.id,
          {},
          {
            orderBy: "created_at",
            descending: true,
            limit: 100,
            offset: 0
          }
        )
        expect(newestFirst.rows.map((row) => row.id)).toEqual(all.rows.map((row) => row.id).reverse())

        const pages: Array<string> = []
        for (let offset = 0; offset < 7; offset += 3) {
          const page = yield* events.list(program.id, {}, { orderBy: "created_at", descending: true, limit: 3, offset })
          pages.push(...page.rows.map((row) => row.id))
        }
        expect(pages).toEqual(newestFirst.rows.map((row) => row.id))

        const created = yield* events.list(
          program.id,
          { type: "card.created" },
          {
            orderBy: "created_at",
            descending: false,
            limit: 2,
            offset: 0
          }
        )
        expect(created.total).toBe(4)
        expect(created.rows).toHaveLength(2)
        expect(created.rows.every((row) => row.type === "card.created")).toBe(true)
      })
    )
  })
