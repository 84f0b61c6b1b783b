import { SqlClient } from "@effect/sql"
import { type Caller, CardMessageRequest, type Conflict, type NetworkCardMessage, NetworkCardMessages } from "@issuing/core"
import { Duration, Effect, Either, Metric, MetricBoundaries, ParseResult, Schedule, Schema } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as tls from "node:tls"
import type { IssuingInstance } from "../App.js"
import { isLoopbackHost } from "../config.js"
import { encodeMessage, frameReader, type IsoMessage, parseMessage } from "./Codec.js"
import { type HostResponseCode, refusalCode, requestClass, responseOf, translate } from "./Messages.js"

/** PEM text, or the path of a PEM file. */
export type PemSource = string | Buffer

/** The host's certificate and key, and the CA whose certificates its clients must present (mutual TLS). */
export interface Iso8583Tls {
  readonly cert: PemSource
  readonly key: PemSource
  readonly ca: PemSource
}

/** Options of `startIso8583Host`. */
export interface Iso8583HostOptions {
  /** The address to listen on; off loopback, `tls` is required. */
  readonly host: string
  /** The port; 0 picks a free one (read it back from the started host). */
  readonly port: number
  /** Mutual TLS: the host's certificate and key, and the CA that signs its gateways' certificates. */
  readonly tls?: Iso8583Tls | undefined
  /**
   * The organization the connections act for, with the `network` right (default
   * ISSUING_ISO8583_ORGANIZATION_ID; unset, the database's only organization).
   */
  readonly organizationId?: string | undefined
  /** Where the host's lines go (connections refused or closed, never a field of a message); default stdout, `null` for none. */
  readonly log?: ((line: string) => void) | null | undefined
}

/** A started ISO 8583 host. */
export interface Iso8583Host {
  /** The address and port it listens on (the port picked when 0 was asked). */
  readonly host: string
  readonly port: number
  readonly organizationId: string
  readonly tls: boolean
  /** Stops accepting, lets the messages in flight finish and answer (at most ISO8583_CLOSE_GRACE_MS), then closes every connection. */
  readonly close: () => Promise<void>
}

/** At most this many requests of one connection are decided at once; beyond, the connection is not read until one finishes. */
export const MAX_IN_FLIGHT_PER_CONNECTION = 256
/** How long `close` waits for the messages in flight. */
export const ISO8583_CLOSE_GRACE_MS = 10_000
/**
 * How long a repeat waits for its first delivery (running in another process, or abandoned by a
 * dead one until its 4 s claim lease runs out) before it is answered 96: a little over the lease.
 */
const REPEAT_WAIT = Duration.seconds(6)
const REPEAT_POLL = Duration.millis(50)

// Metrics (docs/observability.md#iso-8583-host). Labels are bounded: request MTI classes and response codes.
const connectionsOpen = Metric.gauge("issuing.iso8583.connections", { description: "ISO 8583 connections open" })
const connectionsAccepted = Metric.counter("issuing.iso8583.connections.accepted", {
  description: "ISO 8583 connections accepted",
  incremental: true
})
const messagesAnswered = Metric.counter("issuing.iso8583.messages", { description: "ISO 8583 requests answered", incremental: true })
const messageDuration = Metric.histogram(
  "issuing.iso8583.message.duration_ms",
  MetricBoundaries.exponential({ start: 0.5, factor: 2, count: 16 }),
  "Time from an ISO 8583 request's last byte to its answer, in milliseconds"
)
const framesRefused = Metric.counter("issuing.iso8583.frames_refused", {
  description: "ISO 8583 frames that could not be parsed (answered 30, or their connection closed)",
  incremental: true
})

/** The request's MTI class as a metric label: one of the classes the host takes, else `other`. */
const mtiLabel = (mti: string | null) => (mti === null ? "unreadable" : (requestClass(mti) ?? "other"))

const readPem = (source: PemSource): Buffer | string =>
  Buffer.isBuffer(source) || source.includes("-----BEGIN") ? source : fs.readFileSync(source)

/** The organization the host acts for: the one named (it must exist), else the database's only one; a string is the problem. */
const organizationOf = (named: string | undefined) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    if (named !== undefined) {
      const rows = yield* sql<{ id: string }>`SELECT id FROM issuing_organizations WHERE id = ${named.toLowerCase()}`
      return rows.length === 0
        ? Either.left(`ISSUING_ISO8583_ORGANIZATION_ID (organizationId) names no organization of this database: ${named}`)
        : Either.right(rows[0]!.id)
    }
    const rows = yield* sql<{ id: string }>`SELECT id FROM issuing_organizations ORDER BY created_at LIMIT 2`
    return rows.length === 1
      ? Either.right(rows[0]!.id)
      : Either.left(
          `the ISO 8583 host needs ISSUING_ISO8583_ORGANIZATION_ID (organizationId): the database has ${rows.length === 0 ? "no organization" : "several organizations"}`
        )
  })

/** The caller a connection acts as: the organization with the `network` right and nothing else. */
const networkCaller = (organizationId: string): Caller => ({
  apiKeyId: `iso8583:${organizationId}`,
  organizationId,
  role: "developer",
  programIds: null,
  panReveal: false,
  cardDisplay: false,
  inboundFunding: false,
  network: true
})

/** An answer a card message got: the ingress's answer, or a response code without one (its refusal, or 96 when the platform failed). */
type Outcome =
  | { readonly _tag: "Answered"; readonly answer: NetworkCardMessage }
  | { readonly _tag: "Code"; readonly code: HostResponseCode }

/** The first delivery of this message id still runs (here or in another process): retry until it has answered. */
const stillRunning = (error: Conflict) => !error.message.includes("different request")

/**
 * Sends one card message through the ingress (the same service and request POST
 * /v1/network/card-messages uses): decoded by the route's schema, exactly once per message id.
 */
const sendCardMessage = (caller: Caller, body: unknown): Effect.Effect<Outcome, never, NetworkCardMessages> =>
  Effect.gen(function* () {
    const decoded = Schema.decodeUnknownEither(CardMessageRequest)(body)
    if (Either.isLeft(decoded)) {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
      return { _tag: "Code", code: refusalCode(issue === undefined ? null : issue.path.join(".")) } as const
    }
    const messages = yield* NetworkCardMessages
    const sent = yield* messages.receive(caller, decoded.right).pipe(
      Effect.retry({
        while: (error) => error._tag === "Conflict" && stillRunning(error),
        schedule: Schedule.spaced(REPEAT_POLL).pipe(Schedule.upTo(REPEAT_WAIT))
      })
    )
    return { _tag: "Answered", answer: JSON.parse(sent.body) as NetworkCardMessage } as const
  }).pipe(
    Effect.catchAll((error) =>
      // The same message id with another message: the network's error. A failure of the platform: 96, the gateway retransmits.
      Effect.succeed<Outcome>({ _tag: "Code", code: error._tag === "Conflict" && !stillRunning(error) ? "30" : "96" })
    ),
    Effect.catchAllDefect((defect) =>
      Effect.as(Effect.logError("ISO 8583 card message failed", defect), { _tag: "Code", code: "96" } as Outcome)
    )
  )

/** The response to one parsed request: network management and format errors at once, card messages through the ingress. */
const answerOf = (
  issuing: IssuingInstance,
  caller: Caller,
  inFlight: Map<string, Promise<Outcome>>,
  request: IsoMessage
): Promise<IsoMessage | null> => {
  const startedMs = performance.now()
  const translation = translate(request)
  const done = (response: IsoMessage | null) => {
    const code = response?.fields.get(39) ?? "none"
    issuing.runtime.runFork(
      Effect.all(
        [
          Metric.update(messagesAnswered.pipe(Metric.tagged("mti", mtiLabel(request.mti)), Metric.tagged("response_code", code)), 1),
          Metric.update(messageDuration.pipe(Metric.tagged("mti", mtiLabel(request.mti))), performance.now() - startedMs)
        ],
        { discard: true }
      )
    )
    return response
  }
  if (translation._tag === "Answer") return Promise.resolve(done(responseOf(request, translation.responseCode)))
  // A repeat of a message still running in this process waits for the first and answers as it does.
  let outcome = inFlight.get(translation.networkMessageId)
  if (outcome === undefined) {
    const started = issuing.runtime.runPromise(sendCardMessage(caller, translation.body))
    inFlight.set(translation.networkMessageId, started)
    outcome = started.finally(() => inFlight.delete(translation.networkMessageId))
  }
  return outcome.then((result) =>
    done(result._tag === "Answered" ? responseOf(request, result.answer.response_code, result.answer) : responseOf(request, result.code))
  )
}

/**
 * Starts an ISO 8583 authorization host for a platform instance (docs/iso8583.md): a TCP listener
 * (TLS with client certificates when `tls` is given, required off loopback) whose connections send
 * card messages to the platform's network ingress as the organization's `network` right. Requests
 * of a connection are decided concurrently and answered as they finish; a frame that cannot be
 * parsed is answered 30 when its MTI is readable, else its connection alone is closed.
 */
export const startIso8583Host = async (issuing: IssuingInstance, options: Iso8583HostOptions): Promise<Iso8583Host> => {
  const log = options.log === undefined ? (line: string) => void process.stdout.write(`issuing: ${line}\n`) : options.log
  if (options.tls === undefined && !isLoopbackHost(options.host)) {
    throw new Error(
      `the ISO 8583 host listens on ${options.host}, off loopback: it needs mutual TLS (ISSUING_ISO8583_TLS_CERT, ISSUING_ISO8583_TLS_KEY and ISSUING_ISO8583_TLS_CA; tls: {cert, key, ca}) or a loopback address`
    )
  }
  const organization = await issuing.runtime.runPromise(
    organizationOf(options.organizationId ?? (process.env.ISSUING_ISO8583_ORGANIZATION_ID?.trim() || undefined))
  )
  if (Either.isLeft(organization)) throw new Error(organization.left)
  const organizationId = organization.right
  const caller = networkCaller(organizationId)
  const inFlight = new Map<string, Promise<Outcome>>()
  const pending = new Set<Promise<unknown>>()
  const sockets = new Set<net.Socket>()
  let open = 0
  const setOpen = (delta: number) => {
    open += delta
    issuing.runtime.runFork(
      Effect.all([Metric.set(connectionsOpen, open), delta > 0 ? Metric.increment(connectionsAccepted) : Effect.void], { discard: true })
    )
  }
  const refuseFrame = (mti: string | null) =>
    issuing.runtime.runFork(Metric.update(framesRefused.pipe(Metric.tagged("mti", mtiLabel(mti))), 1))

  const serve = (socket: net.Socket) => {
    sockets.add(socket)
    setOpen(1)
    socket.setNoDelay(true)
    const reader = frameReader()
    let running = 0
    const write = (response: IsoMessage | null) => {
      if (response !== null && !socket.destroyed) socket.write(encodeMessage(response))
    }
    socket.on("data", (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        const parsed = parseMessage(frame)
        if (parsed._tag === "Unparsable") {
          refuseFrame(parsed.mti)
          const response = parsed.mti === null ? null : responseOf({ mti: parsed.mti, fields: parsed.fields }, "30")
          if (response === null) {
            log?.(`ISO 8583 connection from ${socket.remoteAddress} closed: ${parsed.problem}`)
            socket.destroy()
            return
          }
          write(response)
          continue
        }
        running += 1
        if (running >= MAX_IN_FLIGHT_PER_CONNECTION) socket.pause()
        // Not interrupted when the connection drops: the message is applied, and its repeat answers as it.
        const answering = answerOf(issuing, caller, inFlight, parsed).then(write, (error) =>
          log?.(`ISO 8583 answer failed: ${error instanceof Error ? error.message : "unknown error"}`)
        )
        pending.add(answering)
        void answering.finally(() => {
          pending.delete(answering)
          running -= 1
          if (running < MAX_IN_FLIGHT_PER_CONNECTION && socket.isPaused() && !socket.destroyed) socket.resume()
        })
      }
      // What follows the whole frames is no frame: close now rather than wait for the length it seems to announce.
      if (!socket.destroyed && reader.unreadableHead()) {
        refuseFrame(null)
        log?.(`ISO 8583 connection from ${socket.remoteAddress} closed: the frame does not start with a 4-digit MTI`)
        socket.destroy()
      }
    })
    socket.on("error", () => socket.destroy())
    socket.on("close", () => {
      sockets.delete(socket)
      setOpen(-1)
    })
  }

  const server =
    options.tls === undefined
      ? net.createServer(serve)
      : tls.createServer(
          {
            cert: readPem(options.tls.cert),
            key: readPem(options.tls.key),
            ca: readPem(options.tls.ca),
            requestCert: true,
            rejectUnauthorized: true,
            minVersion: "TLSv1.2"
          },
          serve
        )
  if (server instanceof tls.Server) {
    server.on("tlsClientError", (error, socket) => {
      log?.(`ISO 8583 connection from ${socket.remoteAddress} refused: ${error.message}`)
    })
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address() as net.AddressInfo
  let closing: Promise<void> | undefined
  return {
    host: address.address,
    port: address.port,
    organizationId,
    tls: options.tls !== undefined,
    close: () =>
      (closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        // Stop reading: no new request starts; those running finish and are answered.
        for (const socket of sockets) socket.pause()
        let timer: NodeJS.Timeout | undefined
        await Promise.race([
          Promise.allSettled([...pending]),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, ISO8583_CLOSE_GRACE_MS)))
        ])
        clearTimeout(timer)
        // Answers written are flushed, then the connections close (a gateway that keeps one open is cut after a second).
        for (const socket of sockets) socket.end()
        const cut = setTimeout(() => {
          for (const socket of sockets) socket.destroy()
        }, 1000)
        await stopped
        clearTimeout(cut)
      })())
  }
}
