import { CLAIM_LEASE_MS } from "@issuing/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type StoreKind, type TestDatabase } from "../support/databases.js"
import { ADMIN_KEY, bundleServer, type ServerBundle, type ServerProcess, serverEnv, startServer } from "./faultServer.js"
import { checkInvariants } from "./invariants.js"
import { type LoggedReceiver, startLoggedReceiver } from "./receiverLog.js"
import { Gate, prepareTransferScenario, reportFigures, sleep, unfinishedClaimKeys } from "./scenario.js"
import { TransferLoad } from "./transferLoad.js"

/**
 * Scenario 1 of the fault suite, crash under load (issue 14; docs/operations.md#fault-tolerance):
 * 32 clients post transfers (half with Idempotency-Keys) while a receiver takes the webhooks;
 * `issuing serve` is killed with SIGKILL at a random moment, five times, and restarted on the same
 * database each time. Clients resend what got no answer with the same key; those without a key
 * are looked for. A resend met with 409 (the key's claim left by the killed process) is answered
 * once the claim's lease has run out, within 5 s of the kill: no claim is aged by hand. Then the invariant check: books balanced, every acknowledged transfer there once
 * as answered, nothing refused written, no request posted twice, every event delivered and every
 * try recorded; and every resend of an answered request replayed the stored answer.
 *
 * `npm run bench -- faults` runs it longer (ISSUING_FAULTS_KILLS, ISSUING_FAULTS_LOAD_MS).
 */
const KILLS = Number(process.env.ISSUING_FAULTS_KILLS ?? "5")
/** Load between restarts: a random time up to this (plus 200 ms). */
const LOAD_MS = Number(process.env.ISSUING_FAULTS_LOAD_MS ?? "500")
const CLIENTS = 32
const KINDS = (process.env.ISSUING_FAULTS_STORES ?? STORE_KINDS.join(",")).split(",") as Array<StoreKind>

let bundle: ServerBundle
beforeAll(async () => {
  bundle = await bundleServer()
})
afterAll(() => bundle?.dispose())

describe.each(KINDS)("crash under transfer load on %s", (kind) => {
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined
  let receiver: LoggedReceiver | undefined
  afterAll(async () => {
    await server?.kill()
    await receiver?.close()
    await database?.drop()
  })

  it(`keeps every invariant across ${KILLS} kill -9 of issuing serve under ${CLIENTS} clients`, async () => {
    const startedMs = Date.now()
    let phaseBegan = startedMs
    database = await createTestDatabase(kind, { migrated: true })
    receiver = await startLoggedReceiver()
    const env = serverEnv(database.url, { ISSUING_WEBHOOK_TIMEOUT_MS: "300" })
    server = await startServer(bundle, env)
    const { accounts, log, programId, subscriptionId } = await prepareTransferScenario(
      () => server!.url,
      ADMIN_KEY,
      receiver.receiver.url,
      8
    )

    const gate = new Gate()
    const load = new TransferLoad({
      target: { url: () => server!.url, ready: gate.wait },
      apiKey: ADMIN_KEY,
      programId,
      accounts,
      clients: CLIENTS,
      log
    })
    const phases: Record<string, number> = {}
    const phase = (name: string) => {
      phases[name] = Date.now() - phaseBegan
      phaseBegan = Date.now()
    }
    phase("setUpMs")
    const killedAtMs: Array<number> = []
    // Claims the killed processes left (their keys), read while no server runs: every unfinished claim is one.
    const orphanedClaims = new Set<string>()
    load.start()
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(200 + Math.random() * LOAD_MS)
      gate.close()
      await server.kill()
      // When it was gone: every try that reached the receiver before began before this.
      killedAtMs.push(Date.now())
      for (const key of await unfinishedClaimKeys(database)) orphanedClaims.add(key)
      server = await startServer(bundle, env)
      gate.open()
    }
    await sleep(300)
    await load.pause()
    phase("loadAndKillsMs")
    // Every claim a killed process left has run out one lease after its kill (the last kill's
    // included), and a second later every resend with its key has been answered.
    await load.settle(40, killedAtMs.at(-1)! + CLAIM_LEASE_MS + 1000)
    phase("resendsMs")

    const report = await checkInvariants({
      store: database,
      baseUrl: server.url,
      apiKey: ADMIN_KEY,
      programId,
      transfers: log,
      receivers: [receiver.logFor(subscriptionId)],
      interruptionsMs: killedAtMs,
      // A try is recorded once its batch is done: within the 300 ms time-out and a write.
      inFlightMs: 2_000
    })
    phase("checkMs")
    reportFigures({
      scenario: "crash under load (kill -9)",
      store: kind,
      faults: `${KILLS} kills`,
      sent: load.figures.sent,
      answered: load.figures.answered,
      lost: load.figures.lost,
      timedOut: load.figures.timedOut,
      retried: load.figures.retried,
      replaysCompared: load.figures.replaysCompared,
      slowestMs: Math.max(...load.timeline.map((trip) => trip.endedMs - trip.sentMs)),
      invariants: report,
      wallSeconds: (Date.now() - startedMs) / 1000
    })
    console.log(
      `crash under load on ${kind}: ${KILLS} kills, ${JSON.stringify(load.figures)}, orphaned claims ${orphanedClaims.size}, invariants ${JSON.stringify(report)}, ${JSON.stringify(phases)}`
    )
    expect(load.anomalies.slice(0, 10)).toEqual([])
    // The crashes happened under load: answers were lost, and resends of them were answered.
    expect(load.figures.lost).toBeGreaterThan(0)
    expect(load.figures.replaysCompared).toBeGreaterThan(0)
    expect(report.acknowledged).toBeGreaterThan(0)
    // No request is left answered 409 on its key: the claims the killed processes left ran out
    // within their lease, and the resends with those keys ran.
    const held = log.entries.filter((entry) => entry.outcome.kind === "held")
    expect(held.length).toBe(load.figures.held)
    expect(held.map((entry) => entry.tag)).toEqual([])
    expect(report.heldWritten).toBe(0)
    await server.stop()
    expect(server.child.exitCode).toBe(0)
  }, 120_000)
})
