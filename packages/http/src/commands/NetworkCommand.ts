import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as tls from "node:tls"
import { encodeMessage, frameReader, type IsoMessage, parseMessage } from "../iso8583/Codec.js"
import { numericOfCurrency } from "../iso8583/Messages.js"

/**
 * `issuing network send --iso8583 HOST:PORT --mti 0100 --pan … --amount …`: one ISO 8583 message to
 * an authorization host, for a person trying it by hand (docs/iso8583.md#trying-it-by-hand). It
 * prints the answer's fields, the card number masked; the exit code is 0 when the answer is 00 or
 * 10, 1 for any other response code, 2 when no answer came.
 */

export const NETWORK_USAGE = `Usage: issuing network send --iso8583 HOST:PORT --mti MTI [options]

  --mti MTI            0100 authorization, 0200 financial, 0120 advice, 0220 completion,
                       0400/0420 reversal, 0800 network management (repeats: 0101, 0401, ...)
  --pan NUMBER         the card number (field 2)
  --amount MINOR       the amount in minor units (field 4)
  --exp YYMM           the expiry (field 14)
  --cvv CODE           the verification code (field 48, subelement 92)
  --currency CODE      ISO 4217, numeric (840) or alphabetic (USD); default 840 (field 49)
  --mcc CODE           the merchant category (field 18); default 5999
  --merchant NAME      the acceptor's name (field 43); --city, --country (alpha-2) too
  --acceptor ID        the acceptor id (field 42); --terminal ID (field 41)
  --acquirer ID        the acquirer id (field 32); default 1
  --stan NNNNNN        the STAN (field 11); default random
  --time MMDDhhmmss    the transmission date-time (field 7); default now (UTC)
  --original MTI:STAN:MMDDhhmmss
                       the message a completion or reversal refers to (field 90; the
                       acquirer of --acquirer), or the 42 digits of field 90 as they are
  --code NNN           the network management code (field 70): 001 sign-on, 002 sign-off, 301 echo
  --cert FILE --key FILE --ca FILE
                       mutual TLS: this client's certificate and key, the host's CA
  --timeout SECONDS    how long to wait for the answer; default 10`

const FIELD_NAMES: Readonly<Record<number, string>> = {
  2: "card number",
  3: "processing code",
  4: "amount",
  7: "transmission date-time",
  11: "STAN",
  32: "acquirer id",
  37: "retrieval reference",
  38: "authorization code",
  39: "response code",
  41: "terminal id",
  42: "acceptor id",
  49: "currency",
  70: "network management code",
  90: "original data elements"
}

/** What field 39 says, for the person reading the answer (docs/iso8583.md#response-codes). */
const RESPONSE_MEANINGS: Readonly<Record<string, string>> = {
  "00": "approved",
  "10": "partial approval",
  "05": "declined by the program",
  "13": "invalid amount",
  "14": "unknown card number",
  "30": "format error",
  "46": "closed card",
  "51": "insufficient funds",
  "54": "expired card or wrong expiry",
  "57": "merchant category or country not allowed",
  "61": "spending limit exceeded",
  "62": "frozen card",
  "96": "system malfunction",
  N7: "wrong verification code"
}

const OPTIONS = [
  "iso8583",
  "mti",
  "pan",
  "amount",
  "exp",
  "cvv",
  "currency",
  "mcc",
  "merchant",
  "city",
  "country",
  "acceptor",
  "terminal",
  "acquirer",
  "stan",
  "time",
  "original",
  "code",
  "cert",
  "key",
  "ca",
  "timeout"
] as const
type Option = (typeof OPTIONS)[number]

class UsageProblem {
  constructor(readonly line: string) {}
}

const refuse = (line: string): never => {
  throw new UsageProblem(line)
}

/** `--name value` and `--name=value` pairs; anything else is a usage problem. */
const readOptions = (args: ReadonlyArray<string>): Partial<Record<Option, string>> => {
  const options: Partial<Record<Option, string>> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
    const name = flag.replace(/^--/, "") as Option
    if (!flag.startsWith("--") || !(OPTIONS as ReadonlyArray<string>).includes(name)) refuse(`network send does not take '${arg}'`)
    const value = inline ?? args[++i]
    if (value === undefined) refuse(`${flag} needs a value`)
    options[name] = value
  }
  return options
}

const digits = (value: string | undefined, name: string, length: number): string | undefined => {
  if (value === undefined) return undefined
  if (!new RegExp(`^\\d{${length}}$`).test(value)) refuse(`--${name} must be ${length} digits (got "${value}")`)
  return value
}

const utcTime = (at: Date) =>
  [at.getUTCMonth() + 1, at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()]
    .map((part) => String(part).padStart(2, "0"))
    .join("")

/** The request the options describe. */
export const requestOf = (options: Partial<Record<Option, string>>, now = new Date()): IsoMessage => {
  const mti = digits(options.mti, "mti", 4) ?? refuse("network send needs --mti")
  const fields = new Map<number, string>()
  const acquirer = options.acquirer ?? "1"
  if (!/^\d{1,11}$/.test(acquirer)) refuse(`--acquirer must be 1 to 11 digits (got "${acquirer}")`)
  const time = digits(options.time, "time", 10) ?? utcTime(now)
  fields.set(7, time)
  fields.set(11, digits(options.stan, "stan", 6) ?? String(crypto.randomInt(1_000_000)).padStart(6, "0"))
  if (mti.startsWith("08")) {
    fields.set(70, digits(options.code ?? "301", "code", 3)!)
    return { mti, fields }
  }
  if (options.pan !== undefined) {
    const pan = options.pan.replace(/[\s-]/g, "")
    if (!/^\d{12,19}$/.test(pan)) refuse("--pan must be a card number of 12 to 19 digits")
    fields.set(2, pan)
  }
  fields.set(3, "000000")
  const amount = options.amount ?? refuse("network send needs --amount (minor units)")
  if (!/^\d{1,12}$/.test(amount)) refuse(`--amount must be an amount in minor units, up to 12 digits (got "${amount}")`)
  fields.set(4, amount.padStart(12, "0"))
  const expiry = digits(options.exp, "exp", 4)
  if (expiry !== undefined) fields.set(14, expiry)
  fields.set(18, digits(options.mcc ?? "5999", "mcc", 4)!)
  fields.set(32, acquirer)
  fields.set(37, `${time.slice(4)}${fields.get(11)}`)
  fields.set(41, (options.terminal ?? "ISSUING1").slice(0, 8).padEnd(8))
  fields.set(42, (options.acceptor ?? "CLI-ACCEPTOR").slice(0, 15).padEnd(15))
  const country = (options.country ?? "US").toUpperCase()
  if (!/^[A-Z]{2}$/.test(country)) refuse(`--country must be an ISO 3166 alpha-2 code (got "${options.country}")`)
  fields.set(43, `${(options.merchant ?? "Issuing CLI").slice(0, 25).padEnd(25)}${(options.city ?? "").slice(0, 13).padEnd(13)}${country}`)
  if (options.cvv !== undefined) {
    if (!/^\d{3,4}$/.test(options.cvv)) refuse("--cvv must be 3 or 4 digits")
    fields.set(48, `92${String(options.cvv.length).padStart(2, "0")}${options.cvv}`)
  }
  const currency = options.currency ?? "840"
  const numeric = /^\d{3}$/.test(currency) ? currency : numericOfCurrency(currency)
  if (numeric === undefined) refuse(`--currency must be an ISO 4217 code, numeric or alphabetic (got "${currency}")`)
  fields.set(49, numeric!)
  if (options.original !== undefined) fields.set(90, originalField(options.original, acquirer))
  return { mti, fields }
}

/** Field 90 of `MTI:STAN:MMDDhhmmss` (the acquirer's own message) or of its 42 digits. */
const originalField = (original: string, acquirer: string): string => {
  if (/^\d{42}$/.test(original)) return original
  const match = /^(\d{4}):(\d{6}):(\d{10})$/.exec(original)
  if (match === null) return refuse(`--original must be MTI:STAN:MMDDhhmmss or 42 digits (got "${original}")`)
  return `${match[1]}${match[2]}${match[3]}${acquirer.padStart(11, "0")}${"0".repeat(11)}`
}

/** The card number as it may be shown: its first six and last four digits. */
const masked = (pan: string) => `${pan.slice(0, 6)}${"*".repeat(Math.max(0, pan.length - 10))}${pan.slice(-4)}`

/** The answer, one field a line. */
export const describeAnswer = (answer: IsoMessage): ReadonlyArray<string> => {
  const lines = [`MTI ${answer.mti}`]
  for (const [field, value] of [...answer.fields].sort(([a], [b]) => a - b)) {
    const shown = field === 2 ? masked(value) : field === 39 && RESPONSE_MEANINGS[value] ? `${value} (${RESPONSE_MEANINGS[value]})` : value
    lines.push(`${String(field).padStart(3)} ${(FIELD_NAMES[field] ?? "").padEnd(24)} ${shown}`)
  }
  return lines
}

const connect = (host: string, port: number, options: Partial<Record<Option, string>>): Promise<net.Socket> =>
  new Promise((resolve, reject) => {
    const secure = options.cert !== undefined || options.key !== undefined || options.ca !== undefined
    const socket = secure
      ? tls.connect(
          {
            host,
            port,
            ...(options.cert === undefined ? {} : { cert: fs.readFileSync(options.cert) }),
            ...(options.key === undefined ? {} : { key: fs.readFileSync(options.key) }),
            ...(options.ca === undefined ? {} : { ca: fs.readFileSync(options.ca) })
          },
          () => resolve(socket)
        )
      : net.connect({ host, port }, () => resolve(socket))
    socket.once("error", reject)
  })

/** Sends one message and waits for the answer whose STAN and transmission time are the request's. */
const exchange = async (socket: net.Socket, request: IsoMessage, timeoutMs: number): Promise<IsoMessage | undefined> =>
  new Promise((resolve) => {
    const reader = frameReader()
    const timer = setTimeout(() => resolve(undefined), timeoutMs)
    socket.on("data", (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        const parsed = parseMessage(frame)
        if (parsed._tag !== "Message") continue
        if (parsed.fields.get(11) === request.fields.get(11) && parsed.fields.get(7) === request.fields.get(7)) {
          clearTimeout(timer)
          resolve(parsed)
        }
      }
    })
    socket.once("close", () => {
      clearTimeout(timer)
      resolve(undefined)
    })
    socket.write(encodeMessage(request))
  })

/** `issuing network send …`; resolves to the exit code. */
export const networkCommand = async (args: ReadonlyArray<string>, out: (line: string) => void, err: (line: string) => void) => {
  if (args[0] === "send" && (args.includes("--help") || args.includes("-h"))) {
    out(NETWORK_USAGE)
    return 0
  }
  if (args[0] !== "send") {
    err(
      `issuing: ${args[0] === undefined ? "network needs a subcommand: network send" : `unknown network command '${args[0]}'`}\n\n${NETWORK_USAGE}`
    )
    return 64
  }
  let request: IsoMessage
  let address: { host: string; port: number }
  let options: Partial<Record<Option, string>>
  try {
    options = readOptions(args.slice(1))
    const target = options.iso8583 ?? refuse("network send needs --iso8583 HOST:PORT")
    const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target)
    if (match === null) refuse(`--iso8583 must be HOST:PORT (got "${target}")`)
    address = { host: match![1]!, port: Number(match![2]) }
    request = requestOf(options)
  } catch (error) {
    if (!(error instanceof UsageProblem)) throw error
    err(`issuing: ${error.line}\n\n${NETWORK_USAGE}`)
    return 64
  }
  const timeoutSeconds = Number(options.timeout ?? "10")
  let socket: net.Socket
  try {
    socket = await connect(address.host, address.port, options)
  } catch (error) {
    err(`issuing: could not connect to ${address.host}:${address.port}: ${error instanceof Error ? error.message : String(error)}`)
    return 2
  }
  try {
    const answer = await exchange(socket, request, (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? timeoutSeconds : 10) * 1000)
    if (answer === undefined) {
      err(`issuing: no answer from ${address.host}:${address.port}`)
      return 2
    }
    for (const line of describeAnswer(answer)) out(line)
    const code = answer.fields.get(39)
    return code === "00" || code === "10" ? 0 : 1
  } finally {
    socket.destroy()
  }
}
