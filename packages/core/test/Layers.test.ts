import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// The layers of core (docs/architecture.md#layers), lowest first: a room imports only rooms of
// lower floors, never one of its own floor or above. A room is a folder of src/; "." is the files
// at the top of src/ (Stores.ts, Services.ts, index.ts).
const FLOORS: ReadonlyArray<ReadonlyArray<string>> = [
  ["platform", "vault", "changes"],
  ["sql"],
  ["access", "idempotency", "events"],
  ["oauth", "webhooks", "cardholders"],
  ["ledger"],
  ["cards"],
  ["network", "disputes"],
  ["."],
  ["testing"]
]

/** The most imports allowed to run against the floors (issue 44: at most two); there are none today. */
const MAX_AGAINST_THE_FLOORS = 2

const src = fileURLToPath(new URL("../src/", import.meta.url))
const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)))

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [path.join(dir, entry.name)] : []
    )

const roomOf = (file: string) => {
  const relative = path.relative(src, file).split(path.sep)
  return relative.length === 1 ? "." : relative[0]!
}

// Relative module names of static imports and re-exports (`… from "./x.js"`, `import "./x.js"`)
// and of dynamic `import("./x.js")`.
const RELATIVE_IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm

/** Every import in core from one room to another: the file, the module it names, both rooms. */
const crossRoomImports = () =>
  sourceFiles(src).flatMap((file) =>
    [...fs.readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)].flatMap((match) => {
      const target = path.resolve(path.dirname(file), match[1]!)
      const from = roomOf(file)
      const to = roomOf(target)
      return from === to ? [] : [{ file: path.relative(src, file), imports: match[1]!, from, to }]
    })
  )

describe("the layers of core", () => {
  it("places every folder of src/ on a floor", () => {
    const rooms = new Set(sourceFiles(src).map(roomOf))
    expect([...rooms].filter((room) => !floorOf.has(room)).sort()).toEqual([])
  })

  it("reads the imports it judges (a check that reads none proves nothing)", () => {
    const imports = crossRoomImports()
    expect(imports.length).toBeGreaterThan(100)
    expect(imports).toContainEqual(expect.objectContaining({ file: "Stores.ts", from: ".", to: "ledger" }))
  })

  it(`has at most ${MAX_AGAINST_THE_FLOORS} imports from a floor to its own or a higher one`, () => {
    const against = crossRoomImports().filter(({ from, to }) => floorOf.get(to)! >= floorOf.get(from)!)
    expect(
      against.length,
      `imports against the floors:\n${against.map((i) => `  ${i.file} (${i.from}) imports ${i.imports} (${i.to})`).join("\n")}`
    ).toBeLessThanOrEqual(MAX_AGAINST_THE_FLOORS)
  })
})
