/**
 * How an event's object is kept in `issuing_events.data`, and how every reader gets it back byte
 * for byte (docs/operations.md#disk-per-transfer).
 *
 * The object of a transfer's or a transaction's event is stored as a *sparse* JSON object: the
 * key `""` first, the number of its shape (below), then only the entries a reader cannot restore,
 * in the object's order, under their own names. Left out: `object` (the shape's), `program_id`
 * when it is the event's, `created_at` and `updated_at` when they are the event's time, an entry
 * whose value is its shape's default (the commonest value of that key, e.g. a book transfer's
 * `"payment_rail":"book"`), and every other entry whose value is null. A reader restores every key of the shape in the shape's order,
 * so `JSON.stringify` of what it reads is exactly `JSON.stringify` of what was written. The
 * entries left in keep their names, so the stores' tag triggers (`json_extract(data,
 * '$.from_financial_account_id')`, `data::jsonb ->> 'card_id'`) read them as before, and a null
 * left out reads as null there too.
 *
 * Any other object — a type without a shape, a shape's keys in another order or with another
 * key, an entry JSON cannot write — is stored as its JSON text, as every event was before, and
 * read as it is (old rows need no migration). Webhook bodies embed that text unchanged (the
 * functions' `balance.updated` on PostgreSQL keep their spacing).
 *
 * SHAPES is append-only: a shape is never edited or removed, since rows name it by number (a
 * writer takes the last shape of an object's keys; earlier ones stay for the rows that name them). A
 * new one must ship in a release before the release that writes it, so that the processes of the
 * older release still running during a rolling deploy can read it.
 */
interface Shape {
  readonly object: string
  readonly keys: ReadonlyArray<string>
  /** Left out when equal: a string or number, or `{}` / `[]` (an empty object or array). */
  readonly defaults?: Readonly<Record<string, string | number | EmptyValue>>
}

type EmptyValue = "{}" | "[]"
const EMPTY_OBJECT: EmptyValue = "{}"
const EMPTY_ARRAY: EmptyValue = "[]"

const TRANSFER_KEYS = [
  "id",
  "object",
  "program_id",
  "transaction_id",
  "payment_rail",
  "amount",
  "currency",
  "from_financial_account_id",
  "to_financial_account_id",
  "status",
  "description",
  "metadata",
  "return_code",
  "return_reason",
  "created_at",
  "updated_at"
]

const TRANSACTION_KEYS = [
  "id",
  "object",
  "program_id",
  "status",
  "amount",
  "currency",
  "card_id",
  "financial_account_id",
  "decline_reason",
  "mcc",
  "merchant_name",
  "merchant",
  "network_transaction_id",
  "authorized_amount",
  "pending_amount",
  "settled_amount",
  "disputed_amount",
  "expires_at",
  "card_events",
  "request_history",
  "created_at",
  "updated_at"
]

const SHAPES: ReadonlyArray<Shape> = [
  // 1: a transfer (ledger/Records.ts `Transfer`), without defaults.
  { object: "transfer", keys: TRANSFER_KEYS },
  // 2: a transaction (ledger/Records.ts `Transaction`), without defaults.
  { object: "transaction", keys: TRANSACTION_KEYS },
  // 3: a transfer, a book transfer's values as defaults.
  {
    object: "transfer",
    keys: TRANSFER_KEYS,
    defaults: { payment_rail: "book", currency: "USD", status: "SETTLED", metadata: EMPTY_OBJECT }
  },
  // 4: a transaction, a transfer's own transaction's values as defaults.
  {
    object: "transaction",
    keys: TRANSACTION_KEYS,
    defaults: { status: "SETTLED", currency: "USD", card_events: EMPTY_ARRAY, request_history: EMPTY_ARRAY }
  }
]

/** The shape a writer takes for a list of keys: the last one (a Map keeps the last value set). */
const SHAPE_BY_KEYS = new Map(SHAPES.map((shape, index) => [shape.keys.join(","), index + 1]))

/**
 * The shape a writer takes for an object's keys, found without joining them: the last shape of
 * that object type (the one SHAPE_BY_KEYS names), when the keys are its keys in its order.
 */
const WRITER_SHAPES = [...new Set(SHAPE_BY_KEYS.values())].map((number) => ({
  number,
  shape: SHAPES[number - 1]!,
  // `"key":` of each key, as JSON.stringify writes an entry's name.
  names: SHAPES[number - 1]!.keys.map((key) => `${JSON.stringify(key)}:`)
}))

const writerShapeOf = (keys: ReadonlyArray<string>) =>
  WRITER_SHAPES.find(({ shape }) => shape.keys.length === keys.length && shape.keys.every((key, i) => key === keys[i]))

/** Stored text of a sparse object starts with this; no platform object has the key "". */
const SPARSE_PREFIX = '{"":'

/** The value a reader restores for `key` when the stored object leaves it out (a new `{}` or `[]` each time). */
const restored = (shape: Shape, key: string, programId: string, createdAt: string): unknown => {
  if (key === "object") return shape.object
  if (key === "program_id") return programId
  if (key === "created_at" || key === "updated_at") return createdAt
  const value = shape.defaults?.[key]
  return value === undefined ? null : value === EMPTY_OBJECT ? {} : value === EMPTY_ARRAY ? [] : value
}

/** True when the writer may leave `value` out: a reader restores the same (see `restored`). */
const restorable = (shape: Shape, key: string, value: unknown, programId: string, createdAt: string): boolean => {
  if (key === "object") return value === shape.object
  if (key === "program_id") return value === programId
  if (key === "created_at" || key === "updated_at") return value === createdAt
  const fallback = shape.defaults?.[key]
  if (fallback === undefined) return value === null
  if (fallback === EMPTY_OBJECT)
    return (
      value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0
    )
  if (fallback === EMPTY_ARRAY) return Array.isArray(value) && value.length === 0
  return value === fallback
}

/** A value JSON writes as itself (JSON.stringify would drop the entry or throw otherwise). */
const writable = (value: unknown): boolean => {
  const kind = typeof value
  return kind !== "undefined" && kind !== "function" && kind !== "symbol" && kind !== "bigint"
}

/**
 * The text to store in `issuing_events.data` for an event about `object`, in program `programId`
 * at `createdAt` — the values the event's own row carries, which a reader restores from.
 */
export const storedEventData = (object: unknown, programId: string, createdAt: string): string => {
  if (object === null || typeof object !== "object" || Array.isArray(object)) return JSON.stringify(object)
  const record = object as Record<string, unknown>
  const keys = Object.keys(record)
  const found = writerShapeOf(keys)
  if (found === undefined || record.object !== found.shape.object) return JSON.stringify(object)
  const { names, number, shape } = found
  // JSON.stringify of `{ "": number, …the entries kept }`, written entry by entry: the same text
  // without building that object (a batch writes one per transfer and per transaction).
  let text = `{"":${number}`
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const value = record[key]
    if (!writable(value)) return JSON.stringify(object)
    if (restorable(shape, key, value, programId, createdAt)) continue
    const json: string | undefined = JSON.stringify(value)
    // A value JSON leaves out (a `toJSON` answering undefined): a reader could not restore it.
    if (json === undefined) return JSON.stringify(object)
    text += `,${names[i]}${json}`
  }
  return `${text}}`
}

/** The event's object from its stored `data`, its program and its time (its row's columns). */
export const eventObject = (stored: string, programId: string, createdAt: string): unknown => {
  const parsed = JSON.parse(stored)
  if (!stored.startsWith(SPARSE_PREFIX)) return parsed
  const shape = SHAPES[parsed[""] - 1]
  // A shape of a later release: this process is older than the row (a rolling deploy; see above).
  if (shape === undefined) throw new Error(`An event's data names shape ${parsed[""]}, unknown to this release: upgrade it`)
  const object: Record<string, unknown> = {}
  for (const key of shape.keys) object[key] = Object.hasOwn(parsed, key) ? parsed[key] : restored(shape, key, programId, createdAt)
  return object
}

/**
 * The event's object as JSON text, for a webhook body: a plain stored text exactly as stored, a
 * sparse one as `JSON.stringify` of the object it stands for.
 */
export const eventDataText = (stored: string, programId: string, createdAt: string): string =>
  stored.startsWith(SPARSE_PREFIX) ? JSON.stringify(eventObject(stored, programId, createdAt)) : stored
