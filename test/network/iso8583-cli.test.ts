import { afterAll, describe, expect, it } from "vitest"
import { runCli, spawnCli, waitForOutput } from "../support/cli.js"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"

/**
 * `issuing serve` with ISSUING_ISO8583_LISTEN starts the ISO 8583 host beside the API, acting for
 * the database's only organization when ISSUING_ISO8583_ORGANIZATION_ID is unset, and `issuing
 * network send` sends one message to it and prints the answer (docs/iso8583.md), on both stores.
 */
describe.each(STORE_KINDS)("issuing serve with an ISO 8583 host, and issuing network send, on %s", (kind) => {
  const databases: Array<TestDatabase> = []
  afterAll(async () => {
    for (const database of databases) await database.drop()
  })
  const KEY = `sk_test_${"k".repeat(40)}`

  it("authorizes and reverses a card by hand, printing the answer with the number masked", async () => {
    const database = await createTestDatabase(kind, { migrated: true })
    databases.push(database)
    const server = spawnCli(["serve"], {
      ISSUING_DATABASE_URL: database.url,
      ISSUING_PORT: "0",
      ISSUING_VAULT_KEY: Buffer.alloc(32, 9).toString("base64"),
      ISSUING_BOOTSTRAP_API_KEY: KEY,
      ISSUING_ISO8583_LISTEN: "127.0.0.1:0"
    })
    let logs = ""
    server.stdout!.on("data", (chunk) => (logs += chunk))
    server.stderr!.on("data", (chunk) => (logs += chunk))
    try {
      const output = await waitForOutput(server, /listening on (http:\/\/\S+)/)
      const isoPort = /ISO 8583 host listening on 127\.0\.0\.1:(\d+) \(plain TCP, loopback; organization ([0-9a-f-]{36})\)/.exec(output)
      expect(isoPort, output).not.toBeNull()
      const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
      const programId = /X-Program-ID: (\S+)/.exec(output)![1]!
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${KEY}`, "x-program-id": programId, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body)
        })
        const json: any = await response.json()
        expect(response.status, JSON.stringify(json)).toBe(200)
        return json
      }
      const wallet = await api("POST", "/v1/wallets", { holder: { name: "Ada Lovelace" } })
      await api("POST", "/v1/transfers", {
        paymentRail: "fednow_instant",
        amount: 5_000,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      const card = await api("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
      const data = await api("POST", `/v1/cards/${card.id}/reveal`)
      const expiry = `${String(data.exp_year % 100).padStart(2, "0")}${String(data.exp_month).padStart(2, "0")}`
      const host = `127.0.0.1:${isoPort![1]}`
      const common = ["network", "send", "--iso8583", host, "--acquirer", "4567", "--currency", "USD"]
      const authorized = await runCli([
        ...common,
        "--mti",
        "0100",
        ...["--pan", data.pan, "--amount", "1500", "--exp", expiry, "--cvv", data.cvv, "--mcc", "5411"],
        ...["--merchant", "Corner Grocery", "--stan", "000777", "--time", "1129120000"]
      ])
      expect(authorized.code, authorized.stderr).toBe(0)
      expect(authorized.stdout).toMatch(/^MTI 0110$/m)
      expect(authorized.stdout).toMatch(/39 response code\s+00 \(approved\)/)
      expect(authorized.stdout).toMatch(/38 authorization code\s+[0-9A-Z]{6}/)
      expect(authorized.stdout).toContain(`${data.pan.slice(0, 6)}`)
      expect(authorized.stdout).not.toContain(data.pan)
      const reversed = await runCli([...common, "--mti", "0400", "--amount", "500", "--original", "0100:000777:1129120000"])
      expect(reversed.code, reversed.stderr).toBe(0)
      expect(reversed.stdout).toMatch(/^MTI 0410$/m)
      const account = await api("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
      expect(account.pending_balance.amount).toBe(1_000)
      // A decline exits 1; an echo answers 0810.
      const declined = await runCli([...common, "--mti", "0100", "--pan", data.pan, "--amount", "999999"])
      expect([declined.code, /39 response code\s+51 \(insufficient funds\)/.test(declined.stdout)]).toEqual([1, true])
      const echo = await runCli(["network", "send", "--iso8583", host, "--mti", "0800", "--code", "301"])
      expect(echo.stdout).toMatch(/^MTI 0810$/m)
      const misused = await runCli(["network", "send", "--iso8583", host, "--mti", "0100", "--amount", "x"])
      expect(misused.code).toBe(64)
      expect(logs).not.toContain(data.pan)
    } finally {
      server.kill("SIGTERM")
    }
  }, 120_000)
})
