import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

/** The repository's root, where `npm run schema` runs. */
const root = fileURLToPath(new URL("../../", import.meta.url))

/** The command that regenerates every checked schema file. */
export const SCHEMA_COMMAND = "npm run schema"

/**
 * Checks that a checked-in schema file (a path from the repository root) holds `generated`, the
 * schema read from a freshly migrated database. With ISSUING_WRITE_SCHEMA=1 (what `npm run schema`
 * sets) it writes the file instead.
 */
export const expectSchemaFile = (file: string, generated: string): void => {
  const target = path.join(root, file)
  if (process.env.ISSUING_WRITE_SCHEMA === "1") {
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, generated)
    return
  }
  const current = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "(missing)"
  expect(current, `${file} is not the schema the migrations make: run \`${SCHEMA_COMMAND}\` and commit the file`).toBe(generated)
}
