import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli.js"

describe("issuing CLI", () => {
  it("names the variable when the configuration is bad", async () => {
    const result = await runCli(["serve"], { ISSUING_PORT: "not-a-port" })
    expect(result.code).not.toBe(0)
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(result.stderr).toContain("ISSUING_PORT")
  })

  it("creates an organization and prints one JSON object", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-cli-"))
    const result = await runCli(["orgs", "create", "--name", "Acme"], {
      ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "db.sqlite")}`
    }, dir)
    expect(result.code).toBe(0)
    const printed = JSON.parse(result.stdout)
    expect(Object.keys(printed).sort()).toEqual(["api_key", "organization_id", "program_id"])
    expect(printed.api_key).toMatch(/^sk_sandbox_/)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
