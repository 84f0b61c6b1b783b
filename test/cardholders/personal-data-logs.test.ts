import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { serveWatchingOutput } from "../support/cli.js"

// A cardholder's personal data (docs/cardholders.md#what-is-stored-and-for-how-long) never appears in
// the server's output: not when it is stored, changed, listed by email, nor when a request carrying
// it is refused (a bad date of birth, an unknown field, a malformed body).

describe("the standalone server and a cardholder's personal data", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-cardholder-logs-"))
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("prints none of the name, email, phone number, address or date of birth while serving the cardholder routes", async () => {
    const server = await serveWatchingOutput(dir)
    const { request } = server
    try {
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

      const output = await server.stop()
      expect(output).toMatch(/listening on/)
      for (const personal of ["Zelda", "Quixotic", "zelda.quixotic", "4155559876", "Juniper", "Vexington", "Quarry", "1983", "X1234567"]) {
        expect(output, `the server printed ${personal}`).not.toContain(personal)
      }
    } finally {
      server.kill()
    }
  }, 120_000)
})
