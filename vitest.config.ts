import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { LongestFirstSequencer } from "./test/support/sequencer.js"

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/`, import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@issuing\/core\/testing$/, replacement: `${src("core")}testing/index.ts` },
      { find: /^@issuing\/core$/, replacement: `${src("core")}index.ts` },
      { find: /^@issuing\/store-sqlite$/, replacement: `${src("store-sqlite")}index.ts` },
      { find: /^@issuing\/store-pg$/, replacement: `${src("store-pg")}index.ts` },
      { find: /^@issuing\/http\/api$/, replacement: `${src("http")}ClientApi.ts` },
      { find: /^@issuing\/http$/, replacement: `${src("http")}index.ts` },
      { find: /^@issuing\/client\/effect$/, replacement: `${src("client")}effect.ts` },
      { find: /^@issuing\/client$/, replacement: `${src("client")}index.ts` }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    globalSetup: ["./test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Test files share their fork's module graph (each still starts its own platforms, databases
    // and processes): re-importing Effect and the packages for every file cost about 9 of the
    // suite's 20 CPU minutes on this 2-core machine (docs/architecture.md#tests).
    isolate: false,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The longest files first, so that the two forks finish together (test/support/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ["default"]
  }
})
