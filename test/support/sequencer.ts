import * as path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The files that take longest (a whole run's per-file durations, docs/testing.md), longest first.
 * vitest hands files to its two forks in list order as each fork frees up; with these at the head,
 * the long ones overlap the many short ones and both forks finish together instead of one fork
 * starting a four-minute file near the end. Without this list a fresh clone (no cached durations)
 * would run the largest files first, by bytes.
 */
export const LONGEST_FIRST: ReadonlyArray<string> = [
  // First although not the longest in a warm checkout: on a clean clone (CI) its `npm pack` builds
  // every package from scratch, and while it packs, packages/http/dist (the console's bundle) is
  // empty, so the console's browser test stays well down the list (docs/testing.md).
  "test/packaging/packaging.test.ts",
  // Then every file over about 45 s in a whole run on a loaded machine (2026-11-29, load 2 rising
  // to 20, docs/testing.md), longest first.
  "test/faults/chaos.test.ts",
  "test/faults/database.test.ts",
  "test/propagation/pgbouncer.test.ts",
  "test/faults/crash.test.ts",
  "test/propagation/two-nodes.test.ts",
  "test/cards/card-properties.test.ts",
  "test/store/list-counts.test.ts",
  "test/foundation/cli.test.ts",
  "test/propagation/rate-limit.test.ts",
  "test/foundation/time-filters.test.ts",
  "test/foundation/openapi-generators.test.ts",
  "test/foundation/echo.test.ts",
  "test/ledger/race.test.ts",
  "test/foundation/getting-started.test.ts",
  "test/network/iso8583.test.ts",
  "test/console/browser.test.ts",
  "test/client/types.test.ts",
  "test/webhooks/two-workers.test.ts",
  "test/cards/card-transactions.test.ts",
  "test/foundation/metadata.test.ts",
  "test/ledger/rail-outcomes.test.ts",
  "test/foundation/starting-after.test.ts",
  "test/cards/cards.test.ts",
  "test/faults/commit-point.test.ts",
  "test/foundation/readme-embedding.test.ts",
  "test/oauth/two-nodes.test.ts",
  "test/webhooks/portal.test.ts",
  "test/ledger/list-combinations.test.ts",
  "test/network/iso8583-two-nodes.test.ts",
  "test/cards/authorization-decisions.test.ts",
  "packages/store-pg/test/upgrade.test.ts",
  "packages/store-pg/test/migrations.test.ts",
  "test/network/iso8583-cli.test.ts",
  "test/cards/hold-expiry.test.ts"
]

/** vitest's own order (cached durations, else size), with LONGEST_FIRST ahead of it. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    const rank = (spec: TestSpecification) => {
      const index = LONGEST_FIRST.indexOf(path.relative(root, spec.moduleId).split(path.sep).join("/"))
      return index < 0 ? LONGEST_FIRST.length : index
    }
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
