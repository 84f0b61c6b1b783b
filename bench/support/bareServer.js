// The bare baseline of `npm run bench -- transfers`: a node:http server in its own process that
// takes the same POST /v1/transfers JSON and writes the same durable rows with the same driver as
// the raw baseline (rawLedger.js) — no auth, no validation, no idempotency, no Effect — and answers
// JSON. What any HTTP service in Node pays on top of the SQL; ours ÷ bare is the overhead of the
// platform itself. With `lean: true` in its config it writes the lean schema instead
// (leanLedger.js: one plpgsql call per transfer on PostgreSQL), and ours ÷ that is how far the
// platform is from the limit of any Node service writing these rows. Started by bench/transfers.js:
// `node bareServer.js <json config>`; prints the port on stdout, stops on SIGTERM.
import Database from "better-sqlite3"
import * as http from "node:http"
import { benchPool } from "./postgres.js"
import { leanWriter } from "./leanLedger.js"
import { postgresTransferText, rawParams, rowsOf, sqliteTransfer, withFanOuts } from "./rawLedger.js"

const config = JSON.parse(process.argv[2])

/** Writes one transfer's rows; resolves when they are durable. */
const makeWriter = () => {
  if (config.kind === "sqlite") {
    const db = new Database(config.filename)
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = FULL")
    db.pragma("foreign_keys = ON")
    const one = sqliteTransfer(db)
    return async (p) => one.immediate(p)
  }
  const pool = benchPool(config.url, 10)
  return (p) => pool.query(postgresTransferText(p))
}
// The lean server's pool is the platform's: 10 connections.
const lean = config.lean ? leanWriter(config, 10) : undefined
const write = lean ? undefined : makeWriter()

const server = http.createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      const rows = rowsOf(config.programId, body.from_financial_account_id, body.to_financial_account_id, body.amount)
      if (lean) await lean.write(config.programId, rows.from, rows.to, rows.amount)
      else await write(withFanOuts(rawParams(rows)))
      const answer = JSON.stringify({ id: rows.transferId, object: "transfer", transaction_id: rows.transactionId, amount: body.amount })
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) })
      response.end(answer)
    } catch (error) {
      response.writeHead(500, { "content-type": "application/json" })
      response.end(JSON.stringify({ error: String(error) }))
    }
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
