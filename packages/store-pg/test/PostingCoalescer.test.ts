import { describe, expect, it } from "@effect/vitest"
import type { PostingOutcome, TransferPosting } from "@issuing/core"
import { Effect } from "effect"
import { makePostingCoalescer } from "../src/PostingCoalescer.js"

/**
 * The coalescer's queue and lanes on their own (docs/ledger.md#coalesced-postings-on-postgresql),
 * over a writer that only takes time: the database's side is tested by the ledger contract suite
 * and test/ledger/race.test.ts. Postings here are tokens; an outcome says which call wrote it.
 */
const posting = (n: number) => ({ n }) as unknown as TransferPosting
const outcome = (posted: boolean): PostingOutcome => ({ posted, refusal: null, availableMinor: 0, wake: false })

const writer = () => {
  const written: Array<{ n: number; batch: number }> = []
  let batches = 0
  return {
    written,
    one: (p: TransferPosting) =>
      Effect.sleep("2 millis").pipe(
        Effect.tap(() => written.push({ n: (p as unknown as { n: number }).n, batch: 0 })),
        Effect.as(outcome(true))
      ),
    many: (ps: ReadonlyArray<TransferPosting>) =>
      Effect.sleep("3 millis").pipe(
        Effect.tap(() => {
          batches += 1
          for (const p of ps) written.push({ n: (p as unknown as { n: number }).n, batch: batches })
        }),
        Effect.as(ps.map(() => outcome(true)))
      )
  }
}

describe("PostingCoalescer", () => {
  it.live("writes what waits in batches, each caller answered once, nothing written twice or lost", () =>
    Effect.gen(function* () {
      const w = writer()
      const coalescer = yield* makePostingCoalescer(w.one, w.many)
      const outcomes = yield* Effect.all(
        Array.from({ length: 200 }, (_, n) => coalescer.post(posting(n))),
        { concurrency: "unbounded" }
      )
      expect(outcomes.every((o) => o.posted)).toBe(true)
      expect(w.written.map((row) => row.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, n) => n))
      // Two ran alone (one per lane), the rest waited and went in batches.
      expect(w.written.filter((row) => row.batch > 0).length).toBeGreaterThan(150)
    }).pipe(Effect.scoped)
  )
})
