import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { spawnCli, waitForOutput } from "../support/cli.js"

// A cardholder's personal data (docs/cardholders.md#what-is-stored-and-for-how-long) never appears in
// the server's output: not when it is stored, changed, listed by email, nor when a request carrying
// it is refused (a bad date of birth, an unknown field, a malformed body).

describe("the standalone server and a cardholder's personal data", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-cardholder-logs-"))
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("prints none of the name, email, phone number, address or date of birth while serving the cardholder routes", async () => {
    const apiKey = `sk_sandbox_${crypto.randomBytes(24).toString("base64url")}`
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as net.AddressInfo
        probe.close(() => resolve(port))
      })
    })
    const child = spawnCli(["serve"], {
      ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "issuing.db")}`,
      ISSUING_PORT: String(port),
      ISSUING_VAULT_KEY: crypto.randomBytes(32).toString("base64"),
      ISSUING_BOOTSTRAP_API_KEY: apiKey
    })
    let output = ""
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    try {
      const started = await waitForOutput(child, /listening on (http:\/\/\S+)/)
      const base = /listening on (http:\/\/\S+)/.exec(started)![1]!
      const programId = /X-Program-ID: ([0-9a-f-]{36})/.exec(started)![1]!
      const request = async (method: string, route: string, body?: unknown, raw?: string) => {
        const response = await fetch(`${base}${route}`, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, "x-program-id": programId, "content-type": "application/json" },
          body: raw ?? (body === undefined ? undefined : JSON.stringify(body))
        })
        return { status: response.status, body: await response.json().catch(() => undefined) }
      }
      const person = {
        type: "individual",
        name: "Zelda Quixotic-Marwood",
        email: "zelda.quixotic@example.org",
        phone_number: "+14155559876",
        billing_address: { line1: "77 Juniper Hollow", city: "Vexington", postal_code: "90210", country: "US" },
        individual: { first_name: "Zelda", last_name: "Quixotic-Marwood", dob: { day: 23, month: 7, year: 1983 } }
      }
      const created = await request("POST", "/v1/cardholders", person)
      expect(created.status).toBe(200)
      await request("PATCH", `/v1/cardholders/${created.body.id}`, {
        billing_address: { ...person.billing_address, line2: "Flat 9 Quarry" }
      })
      await request("GET", `/v1/cardholders?email=${encodeURIComponent(person.email)}`)
      await request("POST", `/v1/cardholders/${created.body.id}/verification`, { status: "VERIFIED", reference: "kyc_case" })
      expect(
        (
          await request("POST", "/v1/cardholders", {
            ...person,
            individual: { ...person.individual, dob: { day: 31, month: 2, year: 1983 } }
          })
        ).status
      ).toBe(400)
      expect((await request("POST", "/v1/cardholders", { ...person, passport: "X1234567" })).status).toBe(400)
      expect(
        (await request("POST", "/v1/cardholders", undefined, `{"name": "Zelda Quixotic-Marwood", "email": "zelda.quixotic@`)).status
      ).toBe(400)

      child.kill("SIGTERM")
      await new Promise((resolve) => child.once("exit", resolve))
      expect(output).toMatch(/listening on/)
      for (const personal of ["Zelda", "Quixotic", "zelda.quixotic", "4155559876", "Juniper", "Vexington", "Quarry", "1983", "X1234567"]) {
        expect(output, `the server printed ${personal}`).not.toContain(personal)
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 120_000)
})
