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
  "test/packaging/packaging.test.ts",
  "test/propagation/pgbouncer.test.ts",
  "test/propagation/two-nodes.test.ts",
  "test/foundation/cli.test.ts",
  "test/propagation/rate-limit.test.ts",
  "test/faults/database.test.ts",
  "test/oauth/two-nodes.test.ts",
  "test/faults/crash.test.ts",
  "test/foundation/fuzz.test.ts",
  "test/cards/rotation.test.ts",
  "test/faults/chaos.test.ts",
  "test/webhooks/two-workers.test.ts",
  "test/console/browser.test.ts",
  "test/webhooks/crash.test.ts"
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
