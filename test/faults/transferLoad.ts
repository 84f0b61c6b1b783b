import * as crypto from "node:crypto"
import type { LoggedTransferRequest, TransferLog } from "./invariants.js"

/**
 * Concurrent clients posting transfers at a server that the scenario breaks underneath them.
 *
 * Half the clients send an Idempotency-Key with every request. A request that gets no answer (the
 * server died) or a 500 (docs/api.md: nothing committed, retry with the same key) is sent again
 * by its client with the same key and the very same body bytes once the server is back; a request
 * without a key cannot be retried safely and is logged as unanswered (or failed), for the
 * invariant check to find it written once or not at all. A resend answered 409 on its key (the
 * claim of the try whose answer was lost, which a killed process leaves until its lease ends,
 * docs/api.md#idempotency) is set aside while the load runs and sent again when it settles, until
 * a given time; still 409 then, it is logged as held: unknown, and never written twice. Some acknowledged keyed requests are sent
 * again later, to check the stored answer is replayed: same body, `Idempotent-Replayed: true`.
 * Every request carries a unique description (its tag), by which the check finds its transfer.
 */
export interface LoadTarget {
  /** The server's current base URL. */
  readonly url: () => string
  /** Resolves when the server is up (at once while it is). */
  readonly ready: () => Promise<void>
}

export interface LoadOptions {
  readonly target: LoadTarget
  readonly apiKey: string
  readonly programId: string
  /** Wallet accounts to move money between (funded by the scenario). */
  readonly accounts: ReadonlyArray<string>
  readonly clients: number
  readonly log: TransferLog
  /** A request not answered within this is a hang (default 10 s). */
  readonly requestTimeoutMs?: number | undefined
  /** Share of acknowledged keyed requests sent again to check the replay (default 0.1; each client's first always). */
  readonly replayShare?: number | undefined
}

/** Something the clients saw that the interface does not allow. */
export interface Anomaly {
  readonly tag: string
  readonly what: string
}

/** A request as its client keeps it: the exact body text, to resend byte for byte. */
interface PreparedRequest {
  readonly tag: string
  readonly idempotencyKey: string | undefined
  readonly request: LoggedTransferRequest
  readonly bodyText: string
}

interface Answer {
  readonly status: number
  readonly body: any
  readonly replayed: boolean
  readonly elapsedMs: number
}

type Sent = { readonly kind: "answer"; readonly answer: Answer } | { readonly kind: "lost"; readonly reason: string }

/** One request's round trip: when it was sent and ended, and its status (0: no answer). */
export interface RoundTrip {
  readonly sentMs: number
  readonly endedMs: number
  readonly status: number
  readonly code?: string | undefined
}

/** What the clients did, by kind. */
export interface LoadFigures {
  sent: number
  answered: Record<string, number>
  /** Requests that got no HTTP answer (connection refused or cut). */
  lost: number
  /** Resends with the same key: after a lost answer or a 500, and replay checks. */
  retried: number
  /** Resends answered with the stored response (`Idempotent-Replayed: true`). */
  replayed: number
  /** Of those, replay checks of an answer the client had: same body. */
  replaysCompared: number
  /** Answers slower than the request time-out (a hang). */
  timedOut: number
  /** Keyed requests still answered 409 on their key when the load settled (logged as held). */
  held: number
}

const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(Math.random() * items.length)]!

export class TransferLoad {
  readonly figures: LoadFigures = { sent: 0, answered: {}, lost: 0, retried: 0, replayed: 0, replaysCompared: 0, timedOut: 0, held: 0 }
  readonly anomalies: Array<Anomaly> = []
  /** Every round trip, in the order they ended. */
  readonly timeline: Array<RoundTrip> = []
  /** Keyed requests still owed an answer, per client. */
  readonly #owed: Array<Array<PreparedRequest>>
  /** Keyed requests whose last resend was answered 409 on their key, with their client. */
  readonly #parked: Array<{ readonly client: number; readonly prepared: PreparedRequest }> = []
  /** The 409 each set-aside request got last. */
  readonly #lastRefusal = new Map<string, Answer>()
  /** Acknowledged keyed requests to send again, with the answer they got. */
  readonly #replays: Array<{ prepared: PreparedRequest; answer: Answer }> = []
  /** Clients that have a replay check queued already. */
  readonly #replayChecked = new Set<number>()
  #running = false
  #loops: Array<Promise<void>> = []

  constructor(readonly options: LoadOptions) {
    this.#owed = Array.from({ length: options.clients }, () => [])
  }

  /** Starts the clients. */
  start(): void {
    this.#running = true
    this.#loops = Array.from({ length: this.options.clients }, (_, client) => this.#loop(client))
  }

  /** Stops sending new requests; resolves when every client has finished its current one. */
  async pause(): Promise<void> {
    this.#running = false
    await Promise.all(this.#loops)
  }

  /** The round trips sent within [fromMs, toMs), by status (and code for errors). */
  between(fromMs: number, toMs: number): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const trip of this.timeline) {
      if (trip.sentMs < fromMs || trip.sentMs >= toMs) continue
      const key = trip.status === 200 ? "200" : `${trip.status} ${trip.status === 0 ? "lost" : trip.code}`
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }

  /** Keyed requests still without an answer (set-aside ones included). */
  get owed(): ReadonlyArray<PreparedRequest> {
    return [...this.#owed.flat(), ...this.#parked.map((parked) => parked.prepared)]
  }

  /** The keys of requests whose answer was lost (their claims were left by a dead process). */
  lostKeys(): Array<string> {
    return this.owed.flatMap((prepared) => (prepared.idempotencyKey === undefined ? [] : [prepared.idempotencyKey]))
  }

  /**
   * Resends, server up, every keyed request still owed an answer until each has one (bounded),
   * then the replay checks; the load must be paused. A request set aside on a 409 is sent again
   * every 250 ms until `heldUntilMs` (epoch ms; by default once); answered 409 still (its key's
   * claim is still in its lease), it is logged as held.
   */
  async settle(rounds = 20, heldUntilMs = 0): Promise<void> {
    const unpark = () => {
      for (const { client, prepared } of this.#parked.splice(0)) this.#owed[client]!.push(prepared)
    }
    unpark()
    for (let round = 0; round < rounds && this.#owed.some((queue) => queue.length > 0); round++) {
      await this.options.target.ready()
      await Promise.all(this.#owed.map((queue, client) => this.#drain(client, queue)))
      if (this.#parked.length > 0 && Date.now() < heldUntilMs) unpark()
      if (this.#owed.some((queue) => queue.length > 0)) await new Promise((resolve) => setTimeout(resolve, 250))
    }
    for (const { prepared } of this.#parked.splice(0)) {
      this.figures.held += 1
      const response = this.#lastRefusal.get(prepared.tag)!
      this.options.log.record({
        tag: prepared.tag,
        idempotencyKey: prepared.idempotencyKey,
        request: prepared.request,
        outcome: { kind: "held", status: response.status, code: String(response.body?.error?.code) }
      })
    }
    for (const queue of this.#owed) {
      for (const prepared of queue) this.anomalies.push({ tag: prepared.tag, what: `still unanswered after ${rounds} rounds` })
    }
    const replays = this.#replays.splice(0)
    await Promise.all(replays.map((replay) => this.#checkReplay(replay.prepared, replay.answer)))
  }

  async #loop(client: number): Promise<void> {
    const keyed = client % 2 === 0
    while (this.#running) {
      await this.options.target.ready()
      if (!this.#running) return
      const queue = this.#owed[client]!
      if (queue.length > 0) {
        await this.#drain(client, queue)
        // Owed requests left: the server is failing them (500, or our own claim still held); back off a little.
        if (queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 50))
        continue
      }
      await this.#attempt(client, this.#prepare(keyed))
    }
  }

  /** Resends the client's owed requests, in order, while the server answers. */
  async #drain(client: number, queue: Array<PreparedRequest>): Promise<void> {
    while (queue.length > 0) {
      const prepared = queue.shift()!
      this.figures.retried += 1
      if (!(await this.#attempt(client, prepared))) return
    }
  }

  /** Sends one request and logs its outcome; false when it got no answer (and is owed again). */
  async #attempt(client: number, prepared: PreparedRequest): Promise<boolean> {
    const sent = await this.#send(prepared)
    const entry = { tag: prepared.tag, idempotencyKey: prepared.idempotencyKey, request: prepared.request }
    if (sent.kind === "lost") {
      this.figures.lost += 1
      if (prepared.idempotencyKey !== undefined) this.#owed[client]!.push(prepared)
      else this.options.log.record({ ...entry, outcome: { kind: "unanswered", reason: sent.reason } })
      return false
    }
    const { answer } = sent
    this.#inspect(prepared, answer)
    if (answer.replayed) this.figures.replayed += 1
    if (answer.status >= 500 && prepared.idempotencyKey !== undefined) {
      // Retried with the same key, as the envelope says; logged as failed until then.
      this.options.log.answered(entry, answer.status, answer.body)
      this.#owed[client]!.push(prepared)
      return false
    }
    if (answer.status === 409 && answer.body?.error?.param === "Idempotency-Key") {
      // Our own earlier try still holds the key (its answer was lost): set it aside, for one more
      // try when the load settles — not before its claim is done or its lease has ended.
      this.#lastRefusal.set(prepared.tag, answer)
      this.#parked.push({ client, prepared })
      return true
    }
    const outcome = this.options.log.answered(entry, answer.status, answer.body)
    if (outcome.kind === "acknowledged" && prepared.idempotencyKey !== undefined && !answer.replayed) {
      // Each client's first acknowledged keyed request, and a share of the others.
      if (!this.#replayChecked.has(client) || Math.random() < (this.options.replayShare ?? 0.1)) this.#replays.push({ prepared, answer })
      this.#replayChecked.add(client)
    }
    return true
  }

  /** Checks an answer is one the interface allows: a transfer, a 422 refusal, or a 500 internal_error. */
  #inspect(prepared: PreparedRequest, answer: Answer): void {
    const { status, body } = answer
    this.figures.answered[status] = (this.figures.answered[status] ?? 0) + 1
    if (status === 200) {
      if (body?.object !== "transfer" || body.description !== prepared.tag) {
        this.anomalies.push({ tag: prepared.tag, what: `200 with ${JSON.stringify(body)}` })
      }
      return
    }
    const error = body?.error
    const allowed =
      (status === 422 && error?.code === "insufficient_funds") ||
      (status === 500 && error?.code === "internal_error" && error?.type === "api_error") ||
      (status === 409 && error?.param === "Idempotency-Key")
    if (!allowed || typeof error?.request_id !== "string" || typeof error?.message !== "string") {
      this.anomalies.push({ tag: prepared.tag, what: `${status} ${JSON.stringify(body)}` })
    }
  }

  /** Sends an acknowledged keyed request again: the stored answer comes back, marked replayed. */
  async #checkReplay(prepared: PreparedRequest, original: Answer): Promise<void> {
    await this.options.target.ready()
    this.figures.retried += 1
    const sent = await this.#send(prepared)
    if (sent.kind === "lost") return void this.anomalies.push({ tag: prepared.tag, what: `replay check lost: ${sent.reason}` })
    const { answer } = sent
    if (answer.replayed) this.figures.replayed += 1
    if (!answer.replayed || answer.status !== original.status || JSON.stringify(answer.body) !== JSON.stringify(original.body)) {
      this.anomalies.push({
        tag: prepared.tag,
        what: `replay: ${answer.status} replayed=${answer.replayed} ${JSON.stringify(answer.body)} for ${JSON.stringify(original.body)}`
      })
    } else this.figures.replaysCompared += 1
  }

  async #send(prepared: PreparedRequest): Promise<Sent> {
    const timeoutMs = this.options.requestTimeoutMs ?? 10_000
    const began = Date.now()
    this.figures.sent += 1
    try {
      const response = await fetch(`${this.options.target.url()}/v1/transfers`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          "x-program-id": this.options.programId,
          "content-type": "application/json",
          ...(prepared.idempotencyKey === undefined ? {} : { "idempotency-key": prepared.idempotencyKey })
        },
        body: prepared.bodyText,
        signal: AbortSignal.timeout(timeoutMs)
      })
      const text = await response.text()
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        body = { unparsed: text }
      }
      this.timeline.push({ sentMs: began, endedMs: Date.now(), status: response.status, code: body?.error?.code })
      return {
        kind: "answer",
        answer: {
          status: response.status,
          body,
          replayed: response.headers.get("idempotent-replayed") === "true",
          elapsedMs: Date.now() - began
        }
      }
    } catch (error) {
      const reason = `${(error as Error).name}: ${(error as Error).message} ${String((error as any)?.cause?.code ?? "")}`
      this.timeline.push({ sentMs: began, endedMs: Date.now(), status: 0, code: reason })
      if ((error as Error).name === "TimeoutError") {
        this.figures.timedOut += 1
        this.anomalies.push({ tag: prepared.tag, what: `no answer within ${timeoutMs} ms` })
      }
      return { kind: "lost", reason }
    }
  }

  /** A new request: mostly book transfers between wallets, some outbound and inbound rails. */
  #prepare(keyed: boolean): PreparedRequest {
    const { accounts } = this.options
    const from = pick(accounts)
    const to = pick(accounts.filter((account) => account !== from))
    const roll = Math.random()
    // Now and then more than any wallet holds, so refusals are part of the load.
    const amount = Math.random() < 0.05 ? 1_000_000_000 : 1 + Math.floor(Math.random() * 500)
    const request: LoggedTransferRequest =
      roll < 0.7
        ? { payment_rail: "book", amount, currency: "USD", from_financial_account_id: from, to_financial_account_id: to }
        : roll < 0.8
          ? { payment_rail: "ach_same_day", amount, currency: "USD", from_financial_account_id: from }
          : roll < 0.9
            ? { payment_rail: "wire", amount, currency: "USD", from_financial_account_id: from }
            : { payment_rail: "fednow_instant", amount: 1 + Math.floor(Math.random() * 999), currency: "USD", to_financial_account_id: to }
    const tag = `fault-${crypto.randomUUID()}`
    return {
      tag,
      idempotencyKey: keyed ? crypto.randomUUID() : undefined,
      request,
      bodyText: JSON.stringify({ ...request, description: tag })
    }
  }
}
