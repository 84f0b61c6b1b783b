import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { EVENT_TYPES as CORE_EVENT_TYPES } from "@issuing/core"
import { EVENT_TYPES } from "@issuing/client"

const ROOT = path.resolve(import.meta.dirname, "../..")
const CLIENT_SRC = path.join(ROOT, "packages/client/src")

/** Type-checks `code` (a module beside the client's sources) and returns the diagnostics as text. */
const typeCheck = (code: string): Array<string> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-client-types-"))
  try {
    const file = path.join(dir, "check.ts")
    fs.writeFileSync(file, code.replaceAll("CLIENT", path.join(CLIENT_SRC, "index.js")))
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: []
    })
    return ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => `${diagnostic.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// docs/client.md#events: the typed event union, the client's plain records, and what its main entry loads.
describe("@issuing/client types", () => {
  it("types every currency as an ISO 4217 code (three upper-case letters) and a page's has_more", () => {
    const diagnostics = typeCheck(`import type { CreateTransferParams, CurrencyCode, FinancialAccount, Page, Transfer } from "CLIENT"
export const euro: CurrencyCode = "EUR"
export const ofTransfer = (transfer: Transfer): CurrencyCode => transfer.currency
export const ofBalance = (account: FinancialAccount): CurrencyCode => account.available_balance.currency
export const more = (page: Page<Transfer>): boolean => page.has_more
export const body: CreateTransferParams = { payment_rail: "book", amount: 100, currency: "USD" }
// @ts-expect-error lower case is not a currency code
export const lower: CurrencyCode = "usd"
// @ts-expect-error two letters are not a currency code
export const short: CreateTransferParams = { ...body, currency: "US" }
// @ts-expect-error nor is a name
export const named: CreateTransferParams = { ...body, currency: "dollars" }
`)
    expect(diagnostics).toEqual([])
  })

  it("narrows a WebhookEvent on its type: data.object is that type's resource", () => {
    const diagnostics =
      typeCheck(`import type { Card, FinancialAccount, Transaction, WebhookEvent, IssuingClient, CreateTransferBatchParams } from "CLIENT"
export const lastFour = (event: WebhookEvent): string | null => {
  if (event.type === "card.created") {
    const card: Card = event.data.object
    return card.last_four
  }
  if (event.type === "balance.updated") {
    const account: FinancialAccount = event.data.object
    return account.currency
  }
  if (event.type === "transaction.updated") {
    const transaction: Transaction = event.data.object
    return transaction.status
  }
  // @ts-expect-error before narrowing, data.object is any of the resources
  const card: Card = event.data.object
  // @ts-expect-error an event type the platform does not emit
  if (event.type === "card.deleted") return null
  return card === undefined ? null : null
}
export const wrongNarrowing = (event: WebhookEvent) => {
  // @ts-expect-error a transfer event holds a transfer, not a card
  if (event.type === "transfer.created") return event.data.object.last_four
  return undefined
}
export const batch: CreateTransferBatchParams = {
  atomic: true,
  transfers: [{ paymentRail: "book", amount: 100, currency: "USD", from_financial_account_id: "a", to_financial_account_id: "b" }]
}
// @ts-expect-error a batch item is a transfer body: amount is a number of minor units
export const badBatch: CreateTransferBatchParams = { transfers: [{ paymentRail: "book", amount: "100", currency: "USD" }] }
export const grant = (client: IssuingClient, interaction: string) =>
  client.oauth.interactions.grant(interaction, { program_ids: ["p"], scopes: ["read"] }).then((redirect) => redirect.redirect_to)
export const secret = (client: IssuingClient) =>
  client.oauthClients.create({ name: "Tool", type: "confidential", redirect_uris: ["https://x.example/cb"], scopes: ["read"] }).then((c) => c.client_secret)
`)
    expect(diagnostics).toEqual([])
  })

  it("knows every event type the platform emits", () => {
    for (const type of CORE_EVENT_TYPES) expect(EVENT_TYPES).toContain(type)
  })

  it("generates its records from core's schemas, and they are current", async () => {
    const check = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [path.join(ROOT, "scripts/client-records.mjs"), "--check"], { cwd: ROOT }, (_, __, stderr) =>
        resolve({ code: child.exitCode, stderr })
      )
    })
    expect(check.stderr).toBe("")
    expect(check.code).toBe(0)
  }, 180_000)

  it("its main entry's sources import nothing of effect or @issuing packages", () => {
    const entry = path.join(CLIENT_SRC, "index.ts")
    const seen = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const imports = [...fs.readFileSync(file, "utf8").matchAll(/\bfrom\s+"([^"]+)"/g)].map((match) => match[1]!)
      for (const specifier of imports) {
        if (specifier.startsWith(".")) visit(path.join(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
        else expect(specifier, `${path.relative(ROOT, file)} imports ${specifier}`).toBe("standardwebhooks")
      }
    }
    visit(entry)
    expect([...seen].map((file) => path.basename(file))).toContain("records.ts")
  })
})
