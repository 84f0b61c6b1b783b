import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { LONGEST_FIRST } from "./sequencer.js"

const ROOT = path.resolve(import.meta.dirname, "../..")

describe("the longest-first list of the test sequencer", () => {
  it("names test files that exist, each once", () => {
    for (const file of LONGEST_FIRST) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true)
    expect(new Set(LONGEST_FIRST).size).toBe(LONGEST_FIRST.length)
  })
})
