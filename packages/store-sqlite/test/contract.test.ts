import { storeContract } from "@issuing/core/testing"
import * as SqliteStore from "@issuing/store-sqlite"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, inject } from "vitest"

// Every port contract gets its own file in one temporary folder, a copy of the run's migrated
// template (test/support/templates.ts): the store then finds no migration pending.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-contract-sqlite-"))
let files = 0
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

storeContract("SQLite", () => {
  files += 1
  const filename = path.join(dir, `contract-${files}.db`)
  fs.copyFileSync(inject("sqliteTemplateFile"), filename)
  return SqliteStore.layer({ filename })
})
