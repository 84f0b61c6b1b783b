import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = path.resolve(import.meta.dirname, "../..")
const PACKAGES = ["core", "store-sqlite", "store-pg", "http", "client"]

/** Every file under `dir` whose name ends in `.ts`, tests and declaration files aside. */
const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(at)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [at] : []
  })

/** The package a bare import specifier names (`@effect/opentelemetry/NodeSdk` → `@effect/opentelemetry`). */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/")

/** The packages a package's sources import at run time (type-only imports aside: they load nothing). */
const importedBy = (pkg: string): Set<string> => {
  const imported = new Set<string>()
  for (const file of sources(path.join(ROOT, "packages", pkg, "src"))) {
    const text = fs.readFileSync(file, "utf8")
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^".][^"]*)"|import\("([^".][^"]*)"\)/g)) {
      const specifier = match[1] ?? match[2]!
      if (!specifier.startsWith("node:")) imported.add(packageOf(specifier))
    }
  }
  return imported
}

const manifest = (at: string) => JSON.parse(fs.readFileSync(path.join(at, "package.json"), "utf8"))

// Issue 49 item 6: a package's `dependencies` are what runs — what its code imports, and the peers
// those packages require — never a test tool (docs/dependencies.md).
describe("runtime dependencies", () => {
  it.each(PACKAGES)("@issuing/%s depends only on what its code imports or those imports require as peers", (pkg) => {
    const imported = importedBy(pkg)
    const peers = new Set(
      [...imported].flatMap((name) => {
        const at = path.join(ROOT, "node_modules", name)
        return fs.existsSync(at) ? Object.keys(manifest(at).peerDependencies ?? {}) : []
      })
    )
    const dependencies = Object.keys(manifest(path.join(ROOT, "packages", pkg)).dependencies ?? {})
    expect(dependencies.filter((name) => !imported.has(name) && !peers.has(name))).toEqual([])
    for (const tool of ["vitest", "@effect/vitest", "fast-check", "typescript", "tsx", "@parcel/watcher"])
      expect(dependencies).not.toContain(tool)
  })
})
