import { describe, expect, it } from "@effect/vitest"
import { expectSchemaFile } from "../../../test/support/schemaFile.js"
import { functionFiles, functionsModuleText } from "./functionsModule.js"

/**
 * The stored functions' files (src/functions/*.sql) are their living source; `src/functions/index.ts`
 * carries their texts into the build and is generated from them by `npm run schema`.
 */
describe("the stored functions' files", () => {
  it("are what src/functions/index.ts carries (else run npm run schema)", () => {
    expectSchemaFile("packages/store-pg/src/functions/index.ts", functionsModuleText(functionFiles()))
  })

  it("each create or replace the one function they are named for", () => {
    for (const file of functionFiles()) {
      const creates = [...file.text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION (\w+)\(/g)].map((match) => match[1])
      expect(creates, file.name).toEqual([file.name])
      expect(file.text, file.name).toMatch(new RegExp(`^(--[^\\n]*\\n)*CREATE OR REPLACE FUNCTION ${file.name}\\(`))
    }
  })
})
