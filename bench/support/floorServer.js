// The floor of `npm run bench -- profile --floor`: an @effect/platform HttpApi server in its own
// process with ONE endpoint, POST /v1/transfers, that decodes the transfers bench's JSON body
// with a Schema and answers a transfer-shaped JSON encoded with another — no database, no auth,
// no work. Its CPU per request is what the framework alone costs a request on this machine: the
// part of our server's CPU that no change to the platform's own code can take away
// (docs/operations.md#volume, "The Node side, profiled"). `node floorServer.js [config]`; prints
// the port on stdout, stops on SIGTERM; the profiler controls it over its IPC channel when it has
// one (support/serverControl.js; `{ "count": true }` as config installs the counters).
//
// With `{ "url": <a PostgreSQL database> }` in its config (`--floor=db`) the endpoint also runs ONE
// `@effect/sql-pg` statement per request — an INSERT of the transfer-shaped row it answers,
// RETURNING its creation time, through a pool of 10 connections kept open as the platform's
// (store-pg's `clientLayer`) — so its CPU per request is the least an HttpApi + @effect/sql server
// pays for a request that waits for the database with the bench's requests in flight: the floor our
// PostgreSQL server is read against (docs/decisions.md, "A fifth round: the floor with a database").
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import { answerControl } from "./serverControl.js"

const Order = Schema.Struct({
  paymentRail: Schema.String,
  amount: Schema.Int,
  currency: Schema.String,
  from_financial_account_id: Schema.String,
  to_financial_account_id: Schema.String
})
const Transfer = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("transfer"),
  payment_rail: Schema.String,
  amount: Schema.Int,
  currency: Schema.String,
  from_financial_account_id: Schema.String,
  to_financial_account_id: Schema.String,
  status: Schema.String,
  created_at: Schema.String
})
const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("transfers").add(HttpApiEndpoint.post("create", "/v1/transfers").setPayload(Order).addSuccess(Transfer))
)
const answer = (payload, id, createdAt) => ({
  id,
  object: "transfer",
  payment_rail: payload.paymentRail,
  amount: payload.amount,
  currency: payload.currency,
  from_financial_account_id: payload.from_financial_account_id,
  to_financial_account_id: payload.to_financial_account_id,
  status: "SETTLED",
  created_at: createdAt
})
const Transfers = HttpApiBuilder.group(Api, "transfers", (handlers) =>
  handlers.handle("create", ({ payload }) => Effect.sync(() => answer(payload, crypto.randomUUID(), new Date().toISOString())))
)

/** The endpoint with its one statement: the row inserted, its `created_at` read back. */
const TransfersWithDatabase = HttpApiBuilder.group(Api, "transfers", (handlers) =>
  Effect.map(SqlClient.SqlClient, (sql) =>
    handlers.handle("create", ({ payload }) => {
      const id = crypto.randomUUID()
      return sql`INSERT INTO floor_transfers (id, payment_rail, amount, currency, from_account, to_account, status)
        VALUES (${id}, ${payload.paymentRail}, ${payload.amount}, ${payload.currency}, ${payload.from_financial_account_id}, ${payload.to_financial_account_id}, 'SETTLED')
        RETURNING created_at`.pipe(
        Effect.map((rows) => answer(payload, id, rows[0].created_at.toISOString())),
        Effect.orDie
      )
    })
  )
)

const config = JSON.parse(process.argv[2] ?? "{}")
const database =
  config.url === undefined
    ? undefined
    : PgClient.layer({ url: Redacted.make(config.url), maxConnections: 10, minConnections: 10, applicationName: "issuing-floor" })
const createTable = Layer.effectDiscard(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`CREATE TABLE IF NOT EXISTS floor_transfers (
      id uuid PRIMARY KEY,
      payment_rail text NOT NULL,
      amount bigint NOT NULL,
      currency text NOT NULL,
      from_account uuid NOT NULL,
      to_account uuid NOT NULL,
      status text NOT NULL,
      created_at timestamp with time zone NOT NULL DEFAULT now()
    )`
  )
)
const group = database === undefined ? Transfers : Layer.provide(TransfersWithDatabase, Layer.provideMerge(createTable, database))

const server = http.createServer()
const Live = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(group))),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" }))
)
if (process.send !== undefined) await answerControl({ entry: import.meta.filename, count: config.count })
Effect.runFork(Layer.launch(Live))
server.once("listening", () => process.stdout.write(`${server.address().port}\n`))
process.once("SIGTERM", () => process.exit(0))
