/**
 * The server of test/faults/commit-point.test.ts: `issuing serve` as a host app runs it
 * (`createIssuing` with `configFromEnv`, the same ISSUING_* variables, the first organization
 * bootstrapped with ISSUING_BOOTSTRAP_API_KEY, the "listening on" line `startServer` waits for),
 * with one crash point of the test's own, so that nothing of it is in the product: its store's
 * IdempotencyStore is wrapped so that the request with Idempotency-Key COMMIT_POINT_CRASH_KEY (a
 * card network message: `network_message:<its network_message_id>`, the key it is claimed under)
 * kills the process with SIGKILL when its 200 answer is stored —
 * - COMMIT_POINT_CRASH_AT=storing: as the answer is written, before it commits (after the
 *   real-time decision, with the posting made in whatever transaction the platform made it);
 * - COMMIT_POINT_CRASH_AT=committed: once the transaction holding the answer has committed, before
 *   the answer is sent.
 */
import { afterCommit, IdempotencyStore } from "@issuing/core"
import { bootstrapOrganization, configFromEnv, createIssuing } from "@issuing/http"
import { Effect, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const crashKey = process.env.COMMIT_POINT_CRASH_KEY
const crashAt = process.env.COMMIT_POINT_CRASH_AT

const die = Effect.sync(() => process.kill(process.pid, "SIGKILL"))

const crashing = Layer.effect(
  IdempotencyStore,
  Effect.map(IdempotencyStore, (store) => ({
    ...store,
    complete: (organizationId: string, key: string, token: string, response: { readonly status: number; readonly sealedBody: string }) => {
      const stored = store.complete(organizationId, key, token, response)
      if (key !== crashKey || response.status !== 200) return stored
      return crashAt === "storing" ? Effect.zipRight(die, Effect.never) : Effect.tap(stored, () => afterCommit(die))
    }
  }))
)

const options = configFromEnv()
const port = Number(process.env.ISSUING_PORT ?? "0")
const server = http.createServer({ keepAliveTimeout: 65_000 })
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const instance = await createIssuing({
  ...options,
  store: crashing.pipe(Layer.provideMerge(options.store)),
  settings: { ...options.settings, baseUrl: url },
  log: null
})
await bootstrapOrganization(instance, process.env.ISSUING_BOOTSTRAP_API_KEY)
server.on("request", instance.listener)
process.on("SIGTERM", () => {
  server.close()
  instance.dispose().then(() => process.exit(0))
})
process.stdout.write(`commit point server: listening on ${url}${crashKey === undefined ? "" : ` (crash ${crashAt} for ${crashKey})`}\n`)
