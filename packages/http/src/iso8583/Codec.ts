/**
 * ISO 8583:1987 frames as card networks' gateways send them (docs/iso8583.md#framing): a 2-byte
 * big-endian length header, the MTI in 4 ASCII digits, a binary primary bitmap (and a secondary one
 * when bit 1 is set), the data elements in ASCII. Table-driven: each field's content type, length
 * type and maximum length, as the `iso_8583` npm package's default dialect has them (the tests pack
 * and parse frames with that package, so the two agree byte for byte).
 */

/** How a field's length is told: fixed, or a 2-, 3- or 6-digit ASCII length before its value. */
type LengthType = "fixed" | "llvar" | "lllvar" | "llllllvar"

/** A field's format: its content (`n` digits, `b` binary, else printable text) and length. */
interface FieldFormat {
  readonly content: "n" | "b" | "text"
  readonly length: LengthType
  /** The fixed length, or the longest value, in characters (for `b`: hex digits, two per byte). */
  readonly maxLength: number
}

const n = (maxLength: number, length: LengthType = "fixed"): FieldFormat => ({ content: "n", length, maxLength })
const text = (maxLength: number, length: LengthType = "fixed"): FieldFormat => ({ content: "text", length, maxLength })
const binary = (hexDigits: number): FieldFormat => ({ content: "b", length: "fixed", maxLength: hexDigits })

/** Fields 2–128 of ISO 8583:1987 (the `iso_8583` package's defaults); docs/iso8583.md lists those the host reads and writes. */
const FORMATS: Readonly<Record<number, FieldFormat>> = {
  2: n(19, "llvar"),
  3: n(6),
  4: n(12),
  5: n(12),
  6: n(12),
  7: n(10),
  8: n(8),
  9: n(8),
  10: n(8),
  11: n(6),
  12: n(6),
  13: n(4),
  14: n(4),
  15: n(4),
  16: n(4),
  17: n(4),
  18: n(4),
  19: n(3),
  20: n(3),
  21: n(3),
  22: n(3),
  23: n(3),
  24: n(3),
  25: n(2),
  26: n(2),
  27: n(1),
  28: text(9),
  29: text(9),
  30: text(9),
  31: text(9),
  32: n(11, "llvar"),
  33: n(11, "llvar"),
  34: text(28, "llvar"),
  35: text(37, "llvar"),
  36: n(104, "lllvar"),
  37: text(12),
  38: text(6),
  39: text(2),
  40: n(3),
  41: text(8),
  42: text(15),
  43: text(40),
  44: text(25, "llvar"),
  45: text(76, "llvar"),
  46: text(999, "lllvar"),
  47: text(999, "lllvar"),
  48: text(999, "lllvar"),
  49: n(3),
  50: text(3),
  51: n(3),
  52: binary(16),
  53: binary(96),
  54: text(120, "lllvar"),
  55: text(999, "lllvar"),
  56: text(999, "lllvar"),
  57: text(999, "lllvar"),
  58: n(11, "llvar"),
  59: text(255, "lllvar"),
  60: text(999, "lllvar"),
  61: text(999, "lllvar"),
  62: text(999, "lllvar"),
  63: text(999, "lllvar"),
  64: binary(16),
  66: n(1),
  67: n(2),
  68: n(3),
  69: n(3),
  70: n(3),
  71: n(4),
  72: n(4),
  73: n(6),
  74: n(10),
  75: n(10),
  76: n(10),
  77: n(10),
  78: n(10),
  79: n(10),
  80: n(10),
  81: n(10),
  82: n(12),
  83: n(12),
  84: n(12),
  85: n(12),
  86: n(16),
  87: n(16),
  88: n(16),
  89: n(16),
  90: n(42),
  91: text(1),
  92: text(2),
  93: text(5),
  94: text(7),
  95: text(42),
  96: binary(16),
  97: text(17),
  98: text(25),
  99: n(11, "llvar"),
  100: n(11, "llvar"),
  101: text(17, "llvar"),
  102: text(28, "llvar"),
  103: text(28, "llvar"),
  104: text(100, "lllvar"),
  105: text(999, "lllvar"),
  106: text(999, "lllvar"),
  107: text(999, "lllvar"),
  108: text(999, "lllvar"),
  109: text(999, "lllvar"),
  110: text(999, "lllvar"),
  111: text(999, "lllvar"),
  112: text(999, "lllvar"),
  113: text(999, "lllvar"),
  114: text(999, "lllvar"),
  115: text(999, "lllvar"),
  116: text(999, "lllvar"),
  117: text(999, "lllvar"),
  118: n(999, "lllvar"),
  119: n(999, "lllvar"),
  120: n(999, "lllvar"),
  121: n(999, "lllvar"),
  122: n(999, "lllvar"),
  123: text(999, "lllvar"),
  124: text(999, "lllvar"),
  125: text(999, "lllvar"),
  126: text(999, "lllvar"),
  127: text(999_999, "llllllvar"),
  128: binary(16)
}

const PREFIX_DIGITS: Readonly<Record<LengthType, number>> = { fixed: 0, llvar: 2, lllvar: 3, llllllvar: 6 }

/** The largest frame the 2-byte length header can announce, in bytes. */
export const MAX_FRAME_BYTES = 0xffff

/** One ISO 8583 message: its MTI and its data elements by number (binary ones as hex text). */
export interface IsoMessage {
  readonly mti: string
  readonly fields: ReadonlyMap<number, string>
}

/**
 * A frame that could not be read whole: `mti` when its first four bytes were an MTI (it is then
 * answered with 39 = `30`), with the fields read before the problem (so the answer can echo the
 * STAN and transmission time).
 */
export interface Unparsable {
  readonly _tag: "Unparsable"
  readonly mti: string | null
  readonly fields: ReadonlyMap<number, string>
  readonly problem: string
}

/** What a frame's body holds: a message, or why it is not one. */
export type Parsed = ({ readonly _tag: "Message" } & IsoMessage) | Unparsable

const MTI = /^\d{4}$/
const DIGITS = /^\d*$/
// Printable ASCII: `ans` fields carry letters, digits, spaces and punctuation.
const PRINTABLE = /^[\x20-\x7e]*$/

/** Parses a frame's body (the bytes after the length header). Never throws. */
export const parseMessage = (body: Buffer): Parsed => {
  const fields = new Map<number, string>()
  const mtiText = body.length >= 4 ? body.toString("latin1", 0, 4) : ""
  const mti = MTI.test(mtiText) ? mtiText : null
  const unparsable = (problem: string): Unparsable => ({ _tag: "Unparsable", mti, fields, problem })
  if (mti === null) return unparsable("the frame does not start with a 4-digit MTI")
  if (body.length < 12) return unparsable("the frame ends inside its bitmap")
  const hasSecondary = (body[4]! & 0x80) !== 0
  const bitmapBytes = hasSecondary ? 16 : 8
  if (body.length < 4 + bitmapBytes) return unparsable("the frame ends inside its bitmap")
  let offset = 4 + bitmapBytes
  for (let field = 2; field <= bitmapBytes * 8; field++) {
    const byte = body[4 + ((field - 1) >> 3)]!
    if ((byte & (0x80 >> ((field - 1) & 7))) === 0) continue
    const format = FORMATS[field]
    if (format === undefined) return unparsable(`field ${field} has no format in this dialect`)
    const prefix = PREFIX_DIGITS[format.length]
    let size = format.maxLength
    if (prefix > 0) {
      const told = body.toString("latin1", offset, offset + prefix)
      if (told.length < prefix || !/^\d+$/.test(told)) return unparsable(`field ${field} has no valid length`)
      size = Number(told)
      if (size > format.maxLength) return unparsable(`field ${field} is longer than ${format.maxLength}`)
      offset += prefix
    }
    const bytes = format.content === "b" ? Math.ceil(size / 2) : size
    if (offset + bytes > body.length) return unparsable(`the frame ends inside field ${field}`)
    const value = format.content === "b" ? body.toString("hex", offset, offset + bytes) : body.toString("latin1", offset, offset + bytes)
    if (format.content === "n" && !DIGITS.test(value)) return unparsable(`field ${field} must be digits`)
    if (format.content === "text" && !PRINTABLE.test(value)) return unparsable(`field ${field} must be printable ASCII`)
    fields.set(field, value)
    offset += bytes
  }
  if (offset !== body.length) return unparsable("bytes follow the last field")
  return { _tag: "Message", mti, fields }
}

/**
 * Encodes a message as a frame, length header included. A value that does not fit its field's
 * format throws: the host only encodes the answers it builds itself.
 */
export const encodeMessage = (message: IsoMessage): Buffer => {
  const numbers = [...message.fields.keys()].sort((a, b) => a - b)
  const secondary = numbers.some((field) => field > 64)
  const bitmap = Buffer.alloc(secondary ? 16 : 8)
  if (secondary) bitmap[0] = 0x80
  const parts: Array<Buffer> = [Buffer.from(message.mti, "latin1"), bitmap]
  for (const field of numbers) {
    const format = FORMATS[field]
    const value = message.fields.get(field)!
    if (format === undefined || field < 2) throw new Error(`ISO 8583 field ${field} has no format`)
    bitmap[(field - 1) >> 3]! |= 0x80 >> ((field - 1) & 7)
    const size = value.length
    if (format.length === "fixed" ? size !== format.maxLength : size > format.maxLength) {
      throw new Error(`ISO 8583 field ${field} must be ${format.length === "fixed" ? "" : "at most "}${format.maxLength} long`)
    }
    const prefix = PREFIX_DIGITS[format.length]
    if (prefix > 0) parts.push(Buffer.from(String(size).padStart(prefix, "0"), "latin1"))
    parts.push(Buffer.from(value, format.content === "b" ? "hex" : "latin1"))
  }
  const body = Buffer.concat(parts)
  if (body.length > MAX_FRAME_BYTES) throw new Error("ISO 8583 frame longer than its length header can tell")
  const header = Buffer.alloc(2)
  header.writeUInt16BE(body.length)
  return Buffer.concat([header, body])
}

/**
 * Cuts a TCP byte stream into frame bodies by their 2-byte length headers. `push` returns the
 * whole frames the new bytes completed (a frame may arrive in pieces, several in one chunk).
 */
export const frameReader = () => {
  let pending: Buffer = Buffer.alloc(0)
  return {
    push: (chunk: Buffer): ReadonlyArray<Buffer> => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      const frames: Array<Buffer> = []
      let offset = 0
      while (pending.length - offset >= 2) {
        const size = pending.readUInt16BE(offset)
        if (pending.length - offset - 2 < size) break
        frames.push(pending.subarray(offset + 2, offset + 2 + size))
        offset += 2 + size
      }
      pending = offset === 0 ? pending : Buffer.from(pending.subarray(offset))
      return frames
    },
    /** Bytes received that are not yet a whole frame. */
    pendingBytes: () => pending.length,
    /**
     * True when the frame still arriving does not start with an MTI: the stream is not ISO 8583
     * (or lost its framing), and no length it announces is worth waiting for.
     */
    unreadableHead: () => pending.length >= 6 && !MTI.test(pending.toString("latin1", 2, 6))
  }
}
