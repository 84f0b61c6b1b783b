import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The folder of the stored functions' living files (docs/architecture.md#stored-functions). */
export const functionsDir = fileURLToPath(new URL("../src/functions/", import.meta.url))

/** Every function file, by name (the file's name without `.sql`), in name order. */
export const functionFiles = (): ReadonlyArray<{ readonly name: string; readonly text: string }> =>
  fs
    .readdirSync(functionsDir)
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((file) => ({ name: file.slice(0, -".sql".length), text: fs.readFileSync(path.join(functionsDir, file), "utf8") }))

/** A file's text as a template literal of the generated module. */
const literal = (text: string) => `\`${text.replaceAll("\\", "\\\\").replaceAll("`", "\\`").replaceAll("${", "\\${")}\``

/**
 * `src/functions/index.ts`: the files' texts as one TypeScript module, so that tsc, esbuild and
 * npm pack carry them like any other source (docs/decisions.md#stored-functions-as-a-generated-module).
 */
export const functionsModuleText = (files: ReadonlyArray<{ readonly name: string; readonly text: string }>): string =>
  [
    "// Generated from the .sql files of this folder by `npm run schema`; edit those, never this file",
    "// (packages/store-pg/test/functions.test.ts fails while it differs from them).",
    'import type { FunctionFile } from "../StoredFunctions.js"',
    "",
    "/** Every stored function's living text, by name (docs/architecture.md#stored-functions). */",
    "export const FUNCTION_FILES: ReadonlyArray<FunctionFile> = [",
    files.map((file) => `  {\n    name: ${JSON.stringify(file.name)},\n    text: ${literal(file.text)}\n  }`).join(",\n"),
    "]",
    ""
  ].join("\n")
