// The floor of `npm run bench -- profile --floor`: an @effect/platform HttpApi server in its own
// process with ONE endpoint, POST /v1/transfers, that decodes the transfers bench's JSON body
// with a Schema and answers a transfer-shaped JSON encoded with another — no database, no auth,
// no work. Its CPU per request is what the framework alone costs a request on this machine: the
// part of our server's CPU that no change to the platform's own code can take away
// (docs/operations.md#volume, "The Node side, profiled"). `node floorServer.js [config]`; prints
// the port on stdout, stops on SIGTERM; the profiler controls it over its IPC channel when it has
// one (support/serverControl.js; `{ "count": true }` as config installs the counters).
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
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
const Transfers = HttpApiBuilder.group(Api, "transfers", (handlers) =>
  handlers.handle("create", ({ payload }) =>
    Effect.sync(() => ({
      id: crypto.randomUUID(),
      object: "transfer",
      payment_rail: payload.paymentRail,
      amount: payload.amount,
      currency: payload.currency,
      from_financial_account_id: payload.from_financial_account_id,
      to_financial_account_id: payload.to_financial_account_id,
      status: "SETTLED",
      created_at: new Date().toISOString()
    }))
  )
)

const server = http.createServer()
const Live = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Transfers))),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" }))
)
const config = JSON.parse(process.argv[2] ?? "{}")
if (process.send !== undefined) await answerControl({ entry: import.meta.filename, count: config.count })
Effect.runFork(Layer.launch(Live))
server.once("listening", () => process.stdout.write(`${server.address().port}\n`))
process.once("SIGTERM", () => process.exit(0))
