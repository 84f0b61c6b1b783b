// @issuing/client in a script: a funded wallet, a payout with idempotent retries, every transfer
// of the wallet listed across pages, a card issued, and the typed error of a payout too large.
//
//   ISSUING_URL=http://127.0.0.1:8080 ISSUING_API_KEY=sk_sandbox_… ISSUING_PROGRAM_ID=… npm start -w @issuing/example-client
import { BusinessRuleError, IssuingClient } from "@issuing/client"
import { pathToFileURL } from "node:url"

/**
 * Runs the walkthrough against a platform and returns what it made.
 * @param {{ baseUrl: string, apiKey: string, programId: string, log?: (line: string) => void }} options
 */
export async function runExample(options) {
  const log = options.log ?? console.log
  const client = new IssuingClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, programId: options.programId })

  const wallet = await client.wallets.create({ holder: { name: "Ada Lovelace", email: "ada@example.com" } })
  log(`wallet ${wallet.id}`)
  // Every POST carries an Idempotency-Key (reused if the client retries); pass your own to make a
  // retry across process restarts safe too.
  for (const amount of [10_000, 2_500, 500]) {
    await client.transfers.create({
      paymentRail: "fednow_instant",
      amount,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
  }
  const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
  log(`balance ${account.balance.amount} ${account.balance.currency}`)

  let refused
  try {
    await client.transfers.create({
      paymentRail: "ach_same_day",
      amount: 1_000_000,
      currency: "USD",
      from_financial_account_id: wallet.financial_account_id
    })
  } catch (error) {
    if (!(error instanceof BusinessRuleError)) throw error
    refused = { code: error.code, param: error.param, requestId: error.requestId }
    log(`refused: ${error.code} (param ${error.param}, request ${error.requestId})`)
  }

  const transfers = []
  for await (const transfer of client.transfers.list({ financial_account_id: wallet.financial_account_id, page_size: 2 })) {
    transfers.push(transfer)
  }
  log(`${transfers.length} transfers`)

  const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
  log(`card ${card.id} ending ${card.last_four}`)
  return { wallet, account, transfers, card, refused }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const required = (name) => {
    const value = process.env[name]
    if (value === undefined || value.trim() === "") {
      process.stderr.write(`client example: set ${name}\n`)
      process.exit(78)
    }
    return value.trim()
  }
  await runExample({
    baseUrl: process.env.ISSUING_URL ?? "http://127.0.0.1:8080",
    apiKey: required("ISSUING_API_KEY"),
    programId: required("ISSUING_PROGRAM_ID")
  })
}
