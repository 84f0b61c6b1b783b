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
  // empty, so the console's browser test stays a few files further down (docs/testing.md).
  "test/packaging/packaging.test.ts",
  "test/faults/chaos.test.ts",
  "test/faults/commit-point.test.ts",
  "test/foundation/fuzz.test.ts",
  "test/ledger/book-transfer-paging.test.ts",
  "test/ledger/properties.test.ts",
  "test/faults/network-crash.test.ts",
  "test/console/browser.test.ts",
  "test/cards/card-spend.test.ts",
  "test/disputes/properties.test.ts",
  "test/cards/card-properties.test.ts",
  "test/network/iso8583-cli.test.ts",
  "test/client/types.test.ts",
  "test/ledger/list-combinations.test.ts",
  "test/foundation/starting-after.test.ts",
  "packages/store-pg/test/contract.test.ts",
  "packages/store-pg/test/upgrade.test.ts"
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
