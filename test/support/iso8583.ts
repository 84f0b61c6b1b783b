import Iso8583 from "iso_8583"
import * as net from "node:net"
import * as tls from "node:tls"

/**
 * An acquirer's side of an ISO 8583 connection for tests: frames packed and parsed with the
 * `iso_8583` npm package (its default ISO 8583:1987 dialect: 2-byte length header, ASCII MTI,
 * binary bitmap, ASCII fields), never with the product's own codec.
 */

/** A message as `iso_8583` takes and gives it: field number → text, "0" the MTI. */
export type IsoFields = Record<string, string>

/** A frame of `fields`, length header included, as `iso_8583` packs it. */
export const pack = (fields: IsoFields): Buffer => {
  const packed = new Iso8583(fields).getBufferMessage()
  if (!Buffer.isBuffer(packed)) throw new Error(`iso_8583 could not pack the message: ${JSON.stringify(packed)}`)
  return packed
}

/** A frame (length header included) as `iso_8583` parses it. */
export const unpack = (frame: Buffer): IsoFields => {
  const parsed = new Iso8583().getIsoJSON(frame, {})
  if (parsed.error !== undefined) throw new Error(`iso_8583 could not parse the frame: ${parsed.error}`)
  return parsed
}

let stanCounter = Math.floor(Math.random() * 500_000)
/** A fresh STAN (field 11), six digits. */
export const nextStan = () => {
  stanCounter = (stanCounter + 1) % 1_000_000
  return String(stanCounter).padStart(6, "0")
}

/** A transmission date-time (field 7, MMDDhhmmss) of now. */
export const transmissionTime = (at = new Date()) => {
  const two = (n: number) => String(n).padStart(2, "0")
  return `${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`
}

/** Field 90 naming an original message: its MTI, STAN, transmission date-time and acquirer id (zero-padded to 11), forwarding id 0. */
export const originalData = (original: IsoFields) =>
  `${original["0"]}${original["11"]}${original["7"]}${(original["32"] ?? "0").padStart(11, "0")}${"0".repeat(11)}`

/** An open connection: requests matched to their answers by STAN and field 7, whatever order they come in. */
export interface IsoConnection {
  /** Sends a message and waits for its answer (the response whose 11 and 7 are the request's). */
  readonly send: (fields: IsoFields) => Promise<IsoFields>
  /** Writes raw bytes. */
  readonly write: (bytes: Buffer) => void
  /** Every answer in the order it arrived. */
  readonly received: Array<IsoFields>
  /** Waits for the next answer, whatever it matches. */
  readonly next: () => Promise<IsoFields>
  /** Settles when the host closed the connection (or it failed). */
  readonly closed: Promise<void>
  readonly close: () => void
}

const keyOf = (fields: IsoFields) => `${fields["11"]}/${fields["7"]}`

/** Connects to an ISO 8583 host: plain TCP, or TLS with the client certificate given. */
export const connectIso = async (
  port: number,
  options: { readonly host?: string; readonly tls?: tls.ConnectionOptions } = {}
): Promise<IsoConnection> => {
  const host = options.host ?? "127.0.0.1"
  const socket: net.Socket = await new Promise((resolve, reject) => {
    const connected =
      options.tls === undefined
        ? net.connect({ port, host }, () => resolve(connected))
        : tls.connect({ port, host, ...options.tls }, () => resolve(connected))
    connected.once("error", reject)
  })
  const waiting = new Map<string, (fields: IsoFields) => void>()
  const anyWaiters: Array<(fields: IsoFields) => void> = []
  const received: Array<IsoFields> = []
  let pending = Buffer.alloc(0)
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const size = pending.readUInt16BE(0)
      const fields = unpack(pending.subarray(0, 2 + size))
      pending = pending.subarray(2 + size)
      received.push(fields)
      anyWaiters.shift()?.(fields)
      const resolve = waiting.get(keyOf(fields))
      waiting.delete(keyOf(fields))
      resolve?.(fields)
    }
  })
  const closed = new Promise<void>((resolve) => {
    socket.once("close", () => resolve())
  })
  socket.on("error", () => {})
  return {
    send: (fields) =>
      new Promise((resolve, reject) => {
        waiting.set(keyOf(fields), resolve)
        void closed.then(() => reject(new Error("the connection closed before the answer")))
        socket.write(pack(fields))
      }),
    write: (bytes) => socket.write(bytes),
    received,
    next: () => new Promise((resolve) => anyWaiters.push(resolve)),
    closed,
    close: () => socket.destroy()
  }
}
