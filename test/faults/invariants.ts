import Database from "better-sqlite3"
import pg from "pg"

/**
 * The one invariant check of the fault suite (issue 14; docs/operations.md#fault-tolerance): after a
 * scenario has broken things while money moved, it reads the database through the store's tables
 * and the public API and throws, naming what is wrong, unless
 *
 * 1. the books balance: for every currency, all debits = all credits (entries and balance rows
 *    alike), every balance row equals the sum of its entries, and no wallet account's principal
 *    book is below zero (settlement accounts may go negative: docs/ledger.md);
 * 2. every transfer is whole — one book transfer of four balanced entries, its `transfer.created`
 *    event once, one settlement event exactly when it is SETTLED — and every transfer request the
 *    clients logged ended as they were told: acknowledged with a 2xx → it exists once, as answered
 *    (read back through `GET /v1/transfers/{id}`); refused (4xx) or failed (5xx) → it does not exist;
 *    never answered (a connection cut by a crash, no Idempotency-Key to retry with) → once or not
 *    at all, never twice;
 * 3. once deliveries have settled (polled, with a bound), every event was delivered to each
 *    enabled subscription of its program and type that existed when it was committed — a SUCCESS
 *    attempt, and a 2xx seen by the receiver when its log is given — and every try a receiver saw
 *    is recorded as an attempt (except tries cut off by a crash of the sender, which leave none:
 *    docs/webhooks.md), with no attempt recording an answer the receiver did not give.
 *
 * Transfers are matched to the requests that asked for them by their `description`: each logged
 * request carries its own unique one (its `tag`), so even a request whose answer was lost can be
 * looked for.
 */

/** What the check needs to know about the database: its kind and where it is. */
export interface StoreLocation {
  readonly kind: "sqlite" | "postgres"
  /** PostgreSQL: the database URL. */
  readonly url: string
  /** SQLite: the database file. */
  readonly filename?: string | undefined
}

/** A connection to the store's tables for the check and the scenarios (plain SQL without parameters). */
export interface StoreReader {
  readonly kind: "sqlite" | "postgres"
  readonly query: <Row = Record<string, unknown>>(text: string) => Promise<Array<Row>>
  readonly close: () => Promise<void>
}

/** Opens a reader on the database: a better-sqlite3 connection of its own, or one pg client. */
export const openStoreReader = async (store: StoreLocation): Promise<StoreReader> => {
  if (store.kind === "sqlite") {
    if (store.filename === undefined) throw new Error("openStoreReader: a SQLite store needs its filename")
    const db = new Database(store.filename, { fileMustExist: true })
    db.pragma("busy_timeout = 10000")
    // Sums are compared exactly, as bigint.
    db.defaultSafeIntegers(true)
    return {
      kind: "sqlite",
      query: async <Row>(text: string) => {
        const statement = db.prepare(text)
        if (statement.reader) return statement.all() as Array<Row>
        statement.run()
        return []
      },
      close: async () => void db.close()
    }
  }
  const client = new pg.Client({ connectionString: store.url })
  await client.connect()
  return {
    kind: "postgres",
    query: async <Row>(text: string) => (await client.query(text)).rows as Array<Row>,
    close: () => client.end()
  }
}

/** The fields of a transfer request the check compares with what was stored. */
export interface LoggedTransferRequest {
  readonly payment_rail: string
  readonly amount: number
  readonly currency: string
  readonly from_financial_account_id?: string | undefined
  readonly to_financial_account_id?: string | undefined
}

/** How a logged transfer request ended, as its client knows it after every retry. */
export type TransferOutcome =
  /** A 2xx: the transfer exists once, as this body says. */
  | { readonly kind: "acknowledged"; readonly status: number; readonly body: Record<string, any> }
  /** A 4xx: nothing was written. */
  | { readonly kind: "refused"; readonly status: number; readonly code: string }
  /** A 5xx (`internal_error`: nothing was committed, docs/api.md#errors). */
  | { readonly kind: "failed"; readonly status: number; readonly code: string }
  /** No answer ever (the server died mid-request and there was no key to retry with). */
  | { readonly kind: "unanswered"; readonly reason: string }
  /**
   * A keyed request whose last retry was still answered 409 on its Idempotency-Key: the key is
   * claimed by a try whose answer was lost (a killed process's claim stays for its 60 s lease,
   * docs/api.md#idempotency). Unknown, like an unanswered one — but never written twice.
   */
  | { readonly kind: "held"; readonly status: number; readonly code: string }

/** One logged request: its unique description (`tag`), its key if any, what it asked, how it ended. */
export interface TransferLogEntry {
  readonly tag: string
  readonly idempotencyKey?: string | undefined
  readonly program?: string | undefined
  readonly request: LoggedTransferRequest
  readonly outcome: TransferOutcome
}

/** The clients' log of transfer requests; a later outcome for a tag (a retry) replaces an earlier one. */
export class TransferLog {
  readonly #entries = new Map<string, TransferLogEntry>()

  /** Records (or replaces) how the request tagged `entry.tag` ended. */
  record(entry: TransferLogEntry): void {
    this.#entries.set(entry.tag, entry)
  }

  /** Records an HTTP answer: 2xx acknowledged, 5xx failed, other refused. */
  answered(entry: Omit<TransferLogEntry, "outcome">, status: number, body: any): TransferOutcome {
    const outcome: TransferOutcome =
      status >= 200 && status < 300
        ? { kind: "acknowledged", status, body }
        : status >= 500
          ? { kind: "failed", status, code: String(body?.error?.code) }
          : { kind: "refused", status, code: String(body?.error?.code) }
    this.record({ ...entry, outcome })
    return outcome
  }

  get entries(): ReadonlyArray<TransferLogEntry> {
    return [...this.#entries.values()]
  }

  count(kind: TransferOutcome["kind"]): number {
    return this.entries.filter((entry) => entry.outcome.kind === kind).length
  }
}

/** One request a receiver got. */
export interface ReceivedTry {
  /** The `webhook-id` header: the event id. */
  readonly eventId: string
  /** When it arrived (ms since the epoch). */
  readonly atMs: number
  /** The status the receiver answered; undefined when it answered nothing (reset, hung up). */
  readonly status?: number | undefined
}

/** What one subscription's receiver saw. */
export interface ReceiverLog {
  readonly subscriptionId: string
  /** Read after the deliveries have settled: make it a getter over a live log. */
  readonly tries: ReadonlyArray<ReceivedTry>
}

export interface InvariantOptions {
  readonly store: StoreLocation
  /** A running server of the database, its admin key and the program the logged transfers are in. */
  readonly baseUrl: string
  readonly apiKey: string
  readonly programId: string
  readonly transfers: TransferLog
  readonly receivers?: ReadonlyArray<ReceiverLog> | undefined
  /** When the sender was killed (ms since the epoch): a try begun shortly before may have no attempt. */
  readonly interruptionsMs?: ReadonlyArray<number> | undefined
  /** How long before an interruption a try counts as cut off by it (default 10 s). */
  readonly inFlightMs?: number | undefined
  /** How long to wait for the delivery queue to empty (default 30 s). */
  readonly settleTimeoutMs?: number | undefined
}

/** What the check looked at. */
export interface InvariantReport {
  readonly currencies: number
  readonly accounts: number
  readonly transfers: number
  readonly acknowledged: number
  readonly refused: number
  readonly failed: number
  /** Unanswered requests found written once / not written. */
  readonly unansweredWritten: number
  readonly unansweredAbsent: number
  /** Requests held by their key's claim (409 to the last retry) found written once / not written. */
  readonly heldWritten: number
  readonly heldAbsent: number
  readonly events: number
  /** (event, subscription) pairs that had to be delivered, and were. */
  readonly deliveries: number
  readonly attempts: number
  readonly receivedTries: number
  /** Tries a receiver saw that have no attempt, excused as cut off by an interruption. */
  readonly triesCutOff: number
  /** Of those, the longest time between a try's arrival and the interruption that cut it off. */
  readonly longestCutOffMs: number
}

/** A violated invariant; the message lists every finding (the first 20). */
export class InvariantViolation extends Error {
  constructor(readonly findings: ReadonlyArray<string>) {
    super(`${findings.length} invariant violation(s):\n- ${findings.slice(0, 20).join("\n- ")}`)
    this.name = "InvariantViolation"
  }
}

const SETTLING_EVENTS = new Set(["transfer.settled", "transfer.settled.instant"])

const big = (value: unknown): bigint => BigInt(value as string | number | bigint)

/** Runs `tasks` with at most `limit` at once. */
const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, task: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++
        results[index] = await task(items[index]!)
      }
    })
  )
  return results
}

/** (1) The books balance and no wallet is overdrawn. */
const checkBooks = async (db: StoreReader, findings: Array<string>) => {
  const balances = await db.query<{ currency: string; debits: unknown; credits: unknown }>(
    `SELECT currency, SUM(debits_minor) AS debits, SUM(credits_minor) AS credits FROM issuing_balances GROUP BY currency`
  )
  for (const row of balances) {
    if (big(row.debits) !== big(row.credits)) {
      findings.push(`balances in ${row.currency}: debits ${row.debits} != credits ${row.credits}`)
    }
  }
  const entries = await db.query<{ currency: string; entry_type: string; total: unknown }>(
    `SELECT currency, entry_type, SUM(amount_minor) AS total FROM issuing_book_entries GROUP BY currency, entry_type`
  )
  const byCurrency = new Map<string, { DEBIT: bigint; CREDIT: bigint }>()
  for (const row of entries) {
    const sums = byCurrency.get(row.currency) ?? { DEBIT: 0n, CREDIT: 0n }
    sums[row.entry_type as "DEBIT" | "CREDIT"] += big(row.total)
    byCurrency.set(row.currency, sums)
  }
  for (const [currency, sums] of byCurrency) {
    if (sums.DEBIT !== sums.CREDIT) findings.push(`entries in ${currency}: debits ${sums.DEBIT} != credits ${sums.CREDIT}`)
  }
  // Every balance row is the sum of its entries (a half-written posting would part them).
  const rows = await db.query<{ account: string; book: string; debits: unknown; credits: unknown; kind: string }>(
    `SELECT b.financial_account_id AS account, b.book, SUM(b.debits_minor) AS debits, SUM(b.credits_minor) AS credits,
            MIN(a.kind) AS kind
     FROM issuing_balances b JOIN issuing_financial_accounts a ON a.id = b.financial_account_id
     GROUP BY b.financial_account_id, b.book`
  )
  const sums = await db.query<{ account: string; book: string; debits: unknown; credits: unknown }>(
    `SELECT financial_account_id AS account, book,
            SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE 0 END) AS debits,
            SUM(CASE WHEN entry_type = 'CREDIT' THEN amount_minor ELSE 0 END) AS credits
     FROM issuing_book_entries GROUP BY financial_account_id, book`
  )
  const fromEntries = new Map(sums.map((row) => [`${row.account}|${row.book}`, row]))
  for (const row of rows) {
    const summed = fromEntries.get(`${row.account}|${row.book}`)
    const debits = summed === undefined ? 0n : big(summed.debits)
    const credits = summed === undefined ? 0n : big(summed.credits)
    if (big(row.debits) !== debits || big(row.credits) !== credits) {
      findings.push(
        `balance of ${row.account}/${row.book} is ${row.debits}/${row.credits} (debits/credits) but its entries sum to ${debits}/${credits}`
      )
    }
    fromEntries.delete(`${row.account}|${row.book}`)
    if (row.kind === "wallet" && row.book === "principal" && big(row.credits) < big(row.debits)) {
      findings.push(`wallet account ${row.account} is overdrawn: credits ${row.credits} < debits ${row.debits}`)
    }
  }
  for (const key of fromEntries.keys()) findings.push(`entries of ${key} have no balance row`)
  return { currencies: byCurrency.size, accounts: new Set(rows.map((row) => row.account)).size }
}

interface TransferRow {
  id: string
  transaction_id: string
  payment_rail: string
  amount_minor: unknown
  currency: string
  from_financial_account_id: string
  to_financial_account_id: string
  status: string
  description: string | null
}

/** (2a) Every stored transfer is whole: its book transfer, four balanced entries, its events. */
const checkTransfersWhole = async (db: StoreReader, findings: Array<string>) => {
  const transfers = await db.query<TransferRow>(
    `SELECT id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id, to_financial_account_id, status, description
     FROM issuing_transfers`
  )
  const bookTransfers = await db.query<{ id: string; transfer_id: string; amount_minor: unknown; currency: string }>(
    `SELECT id, transfer_id, amount_minor, currency FROM issuing_book_transfers`
  )
  const entries = await db.query<{
    book_transfer_id: string
    position: unknown
    financial_account_id: string
    book: string
    entry_type: string
    amount_minor: unknown
  }>(`SELECT book_transfer_id, position, financial_account_id, book, entry_type, amount_minor FROM issuing_book_entries`)
  const events = await db.query<{ id: string; type: string; data: string }>(
    `SELECT id, type, data FROM issuing_events WHERE type LIKE 'transfer.%' OR type = 'transaction.updated'`
  )
  const booksByTransfer = new Map<string, Array<(typeof bookTransfers)[number]>>()
  for (const row of bookTransfers) booksByTransfer.set(row.transfer_id, [...(booksByTransfer.get(row.transfer_id) ?? []), row])
  const entriesByBook = new Map<string, Array<(typeof entries)[number]>>()
  for (const row of entries) entriesByBook.set(row.book_transfer_id, [...(entriesByBook.get(row.book_transfer_id) ?? []), row])
  const eventsByObject = new Map<string, Array<string>>()
  for (const event of events) {
    // The column holds `data.object` of the event as JSON.
    const objectId = String(JSON.parse(event.data)?.id)
    eventsByObject.set(objectId, [...(eventsByObject.get(objectId) ?? []), event.type])
  }
  const transferIds = new Set(transfers.map((transfer) => transfer.id))
  for (const row of bookTransfers) {
    if (!transferIds.has(row.transfer_id)) findings.push(`book transfer ${row.id} names transfer ${row.transfer_id}, which does not exist`)
  }
  for (const transfer of transfers) {
    const books = booksByTransfer.get(transfer.id) ?? []
    if (books.length !== 1) {
      findings.push(`transfer ${transfer.id} has ${books.length} book transfers`)
      continue
    }
    const book = books[0]!
    const amount = big(transfer.amount_minor)
    if (big(book.amount_minor) !== amount || book.currency !== transfer.currency) {
      findings.push(
        `transfer ${transfer.id}: book transfer of ${book.amount_minor} ${book.currency}, transfer of ${amount} ${transfer.currency}`
      )
    }
    const got = (entriesByBook.get(book.id) ?? [])
      .map((entry) => `${entry.financial_account_id}:${entry.book}:${entry.entry_type}:${entry.amount_minor}`)
      .sort()
    const from = transfer.from_financial_account_id
    const to = transfer.to_financial_account_id
    const wanted = [
      `${from}:principal:DEBIT:${amount}`,
      `${from}:cash:CREDIT:${amount}`,
      `${to}:cash:DEBIT:${amount}`,
      `${to}:principal:CREDIT:${amount}`
    ].sort()
    if (JSON.stringify(got) !== JSON.stringify(wanted)) {
      findings.push(`transfer ${transfer.id}: entries ${JSON.stringify(got)}, expected ${JSON.stringify(wanted)}`)
    }
    const types = eventsByObject.get(transfer.id) ?? []
    const created = types.filter((type) => type === "transfer.created").length
    const settled = types.filter((type) => SETTLING_EVENTS.has(type)).length
    if (created !== 1) findings.push(`transfer ${transfer.id} has ${created} transfer.created events`)
    if (settled !== (transfer.status === "SETTLED" ? 1 : 0)) {
      findings.push(`transfer ${transfer.id} is ${transfer.status} with ${settled} settlement events`)
    }
    if (!(eventsByObject.get(transfer.transaction_id) ?? []).includes("transaction.updated")) {
      findings.push(`transaction ${transfer.transaction_id} of transfer ${transfer.id} has no transaction.updated event`)
    }
  }
  return transfers
}

/** (2b) Every logged request ended in the database as its client was told. */
const checkLoggedTransfers = async (options: InvariantOptions, transfers: ReadonlyArray<TransferRow>, findings: Array<string>) => {
  const byTag = new Map<string, Array<TransferRow>>()
  for (const transfer of transfers) {
    if (transfer.description !== null) byTag.set(transfer.description, [...(byTag.get(transfer.description) ?? []), transfer])
  }
  const counts = { acknowledged: 0, refused: 0, failed: 0, unansweredWritten: 0, unansweredAbsent: 0, heldWritten: 0, heldAbsent: 0 }
  const toRead: Array<{ entry: TransferLogEntry; body: Record<string, any> }> = []
  for (const entry of options.transfers.entries) {
    const found = byTag.get(entry.tag) ?? []
    const what = `request ${entry.tag}${entry.idempotencyKey === undefined ? "" : ` (key ${entry.idempotencyKey})`}`
    if (found.length > 1) findings.push(`${what} was posted ${found.length} times: ${found.map((row) => row.id).join(", ")}`)
    const outcome = entry.outcome
    switch (outcome.kind) {
      case "acknowledged": {
        counts.acknowledged += 1
        const row = found[0]
        if (row === undefined) {
          findings.push(`${what} was acknowledged (${outcome.status}, transfer ${outcome.body.id}) but no transfer exists`)
          break
        }
        if (row.id !== outcome.body.id) findings.push(`${what}: acknowledged as ${outcome.body.id}, stored as ${row.id}`)
        if (big(row.amount_minor) !== BigInt(entry.request.amount) || row.currency !== entry.request.currency) {
          findings.push(`${what}: asked ${entry.request.amount} ${entry.request.currency}, stored ${row.amount_minor} ${row.currency}`)
        }
        if (row.status !== outcome.body.status) findings.push(`${what}: answered ${outcome.body.status}, stored ${row.status}`)
        toRead.push({ entry, body: outcome.body })
        break
      }
      case "refused":
      case "failed":
        counts[outcome.kind] += 1
        if (found.length > 0) findings.push(`${what} was answered ${outcome.status} ${outcome.code} but transfer ${found[0]!.id} exists`)
        break
      case "unanswered":
        if (found.length === 0) counts.unansweredAbsent += 1
        else counts.unansweredWritten += 1
        break
      case "held":
        if (found.length === 0) counts.heldAbsent += 1
        else counts.heldWritten += 1
    }
  }
  // Read back through the public API, as a client would.
  await mapLimit(toRead, 16, async ({ entry, body }) => {
    const response = await fetch(`${options.baseUrl}/v1/transfers/${body.id}`, {
      headers: { authorization: `Bearer ${options.apiKey}`, "x-program-id": entry.program ?? options.programId },
      signal: AbortSignal.timeout(10_000)
    })
    const read = (await response.json()) as Record<string, any>
    if (response.status !== 200) {
      findings.push(`GET /v1/transfers/${body.id} (request ${entry.tag}): ${response.status} ${JSON.stringify(read)}`)
      return
    }
    for (const field of [
      "id",
      "transaction_id",
      "payment_rail",
      "amount",
      "currency",
      "from_financial_account_id",
      "to_financial_account_id",
      "status",
      "description"
    ]) {
      if (read[field] !== body[field]) {
        findings.push(`GET /v1/transfers/${body.id}: ${field} ${JSON.stringify(read[field])}, answered ${JSON.stringify(body[field])}`)
      }
    }
  })
  return counts
}

interface PairRow {
  event_id: string
  subscription_id: string
}

/** Waits until no delivery of an enabled subscription is queued (the system has settled). */
const waitSettled = async (db: StoreReader, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const [row] = await db.query<{ queued: unknown }>(
      `SELECT COUNT(*) AS queued FROM issuing_webhook_deliveries d
       JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id WHERE NOT s.disabled`
    )
    const queued = Number(row!.queued)
    if (queued === 0) return
    if (Date.now() > deadline) return `deliveries not settled after ${timeoutMs} ms: ${queued} still queued`
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** (3) Every event reached every subscription it matched; every try a receiver saw is an attempt. */
const checkDeliveries = async (options: InvariantOptions, db: StoreReader, findings: Array<string>) => {
  const unsettled = await waitSettled(db, options.settleTimeoutMs ?? 30_000)
  if (unsettled !== undefined) findings.push(unsettled)
  const [eventCount] = await db.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM issuing_events`)
  // The subscriptions an event matched when it was committed: enabled, of its program and type, older.
  const due = await db.query<PairRow>(
    `SELECT e.id AS event_id, s.id AS subscription_id
     FROM issuing_events e
     JOIN issuing_webhook_event_types t ON t.program_id = e.program_id AND t.event_type = e.type
     JOIN issuing_webhook_subscriptions s ON s.id = t.subscription_id
     WHERE NOT s.disabled AND s.created_at <= e.created_at`
  )
  const attempts = await db.query<PairRow & { status: string; response_code: unknown }>(
    `SELECT event_id, subscription_id, status, response_code FROM issuing_webhook_attempts`
  )
  const pair = (eventId: string, subscriptionId: string) => `${eventId}|${subscriptionId}`
  const attemptsByPair = new Map<string, Array<(typeof attempts)[number]>>()
  for (const attempt of attempts) {
    const key = pair(attempt.event_id, attempt.subscription_id)
    attemptsByPair.set(key, [...(attemptsByPair.get(key) ?? []), attempt])
  }
  const receivers = new Map((options.receivers ?? []).map((log) => [log.subscriptionId, log]))
  const triesByPair = new Map<string, Array<ReceivedTry>>()
  for (const log of receivers.values()) {
    for (const received of log.tries) {
      const key = pair(received.eventId, log.subscriptionId)
      triesByPair.set(key, [...(triesByPair.get(key) ?? []), received])
    }
  }
  for (const { event_id, subscription_id } of due) {
    const key = pair(event_id, subscription_id)
    if (!(attemptsByPair.get(key) ?? []).some((attempt) => attempt.status === "SUCCESS")) {
      findings.push(`event ${event_id} has no SUCCESS attempt for subscription ${subscription_id}`)
    }
    if (receivers.has(subscription_id)) {
      const ok = (triesByPair.get(key) ?? []).some((received) => received.status !== undefined && received.status < 300)
      if (!ok) findings.push(`the receiver of subscription ${subscription_id} never answered 2xx to event ${event_id}`)
    }
  }
  // Every try is an attempt; no attempt claims an answer the receiver did not give.
  const inFlightMs = options.inFlightMs ?? 10_000
  /** How long before the next interruption a try began, when it is within `inFlightMs` of one. */
  const cutOffBy = (atMs: number) => {
    const next = Math.min(...(options.interruptionsMs ?? []).filter((killedMs) => killedMs >= atMs))
    return next - atMs <= inFlightMs ? next - atMs : undefined
  }
  let receivedTries = 0
  let triesCutOff = 0
  let longestCutOffMs = 0
  for (const [key, tries] of triesByPair) {
    receivedTries += tries.length
    const recorded = attemptsByPair.get(key) ?? []
    const missing = tries.length - recorded.length
    const excusable = tries.flatMap((received) => cutOffBy(received.atMs) ?? []).sort((a, b) => a - b)
    if (missing > excusable.length) {
      findings.push(
        `pair ${key}: the receiver saw ${tries.length} tries, ${recorded.length} attempts are recorded (${excusable.length} cut off by a crash)`
      )
    } else if (missing > 0) {
      triesCutOff += missing
      // Presumed cut off: the tries nearest an interruption.
      longestCutOffMs = Math.max(longestCutOffMs, excusable[missing - 1]!)
    }
    const answered = tries.flatMap((received) => (received.status === undefined ? [] : [received.status]))
    for (const attempt of recorded) {
      const code = Number(attempt.response_code)
      if (code === 0) continue
      const index = answered.indexOf(code)
      if (index === -1) findings.push(`pair ${key}: an attempt records ${code}, which the receiver did not answer`)
      else answered.splice(index, 1)
    }
  }
  return { events: Number(eventCount!.n), deliveries: due.length, attempts: attempts.length, receivedTries, triesCutOff, longestCutOffMs }
}

/** Checks every invariant; resolves with what was looked at, or throws an InvariantViolation. */
export const checkInvariants = async (options: InvariantOptions): Promise<InvariantReport> => {
  const db = await openStoreReader(options.store)
  const findings: Array<string> = []
  try {
    const delivered = await checkDeliveries(options, db, findings)
    const books = await checkBooks(db, findings)
    const transfers = await checkTransfersWhole(db, findings)
    const logged = await checkLoggedTransfers(options, transfers, findings)
    if (findings.length > 0) throw new InvariantViolation(findings)
    return { ...books, transfers: transfers.length, ...logged, ...delivered }
  } finally {
    await db.close()
  }
}
