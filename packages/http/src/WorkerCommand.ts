import { type Effect, Exit, Fiber } from "effect"
import { backgroundWork, createIssuing } from "./App.js"
import { resolveVaultKeys, type ServerConfig } from "./config.js"
import { connectionNotes, describeDatabase, storeFor } from "./Store.js"
import { telemetryFromEnv } from "./Telemetry.js"

const out = (line: string) => process.stdout.write(`${line}\n`)
const err = (line: string) => process.stderr.write(`${line}\n`)

/**
 * `issuing worker`: the platform's background work alone (webhook delivery and the hourly purges),
 * beside `issuing serve` or host apps that leave it out (`createIssuing({ background: false })`);
 * several workers share one database safely (claims use SKIP LOCKED and leases).
 * SIGTERM/SIGINT stop it gracefully: deliveries in flight finish and are recorded first.
 */
export const workerCommand = async (config: ServerConfig, _args: ReadonlyArray<string>): Promise<number> => {
  const instance = await createIssuing({
    store: storeFor(config.database),
    vaultKeys: resolveVaultKeys(config),
    settings: config.settings,
    clockOffsetMs: config.clockOffsetMs,
    telemetry: telemetryFromEnv(process.env),
    // This command is the background work: run here, watched, not forked by createIssuing.
    background: false,
    log: null
  })
  for (const note of await connectionNotes(config.database)) out(`issuing: ${note}`)
  const fiber = instance.runtime.runFork(backgroundWork(instance) as Effect.Effect<void, unknown, any>)
  out(
    `issuing: webhook worker running (store ${describeDatabase(config.database)}, concurrency ${config.settings.webhookConcurrency}, timeout ${config.settings.webhookTimeoutMs} ms${instance.telemetry ? ", telemetry on" : ""})`
  )
  const stopped = await new Promise<string | Exit.Exit<void, unknown>>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"))
    process.once("SIGINT", () => resolve("SIGINT"))
    instance.runtime.runPromise(Fiber.await(fiber)).then(resolve, (error) => resolve(Exit.die(error)))
  })
  if (typeof stopped !== "string") {
    err(`issuing: webhook worker stopped unexpectedly: ${Exit.isFailure(stopped) ? String(stopped.cause) : "exited"}`)
    await instance.dispose()
    return 1
  }
  out(`issuing: ${stopped} received, stopping the webhook worker`)
  await instance.runtime.runPromise(Fiber.interrupt(fiber))
  await instance.dispose()
  out("issuing: webhook worker stopped")
  return 0
}
