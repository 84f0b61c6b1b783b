import { Headers, HttpIncomingMessage, type HttpServerRequest, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import { Readable } from "node:stream"
import { ApiFailure, apiFailure, appendParamSegment, unknownParameterFailure } from "../errors.js"

const tooLarge = (maxBytes: number) => apiFailure("request_too_large", `The request body exceeds ${maxBytes} bytes.`, null)
const unreadable = () => apiFailure("invalid_request", "The request body could not be read.", null)

/**
 * Reads a Node request body up to `maxBytes`. Past the limit it stops collecting but keeps the
 * socket open and drains the rest, so the 413 envelope reaches the client (the platform's own
 * bounded reader destroys the socket, and the client sees a reset instead of an answer).
 */
const readNodeBody = (source: Readable, maxBytes: number): Effect.Effect<string, ApiFailure> =>
  Effect.async<string, ApiFailure>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("close", onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        cleanup()
        source.resume()
        resume(Effect.fail(tooLarge(maxBytes)))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, size).toString("utf8")))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(unreadable()))
    }
    const onClose = () => {
      if (!source.readableEnded) onError()
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    source.once("close", onClose)
    return Effect.sync(cleanup)
  })

/** Reads a web-standard request body up to `maxBytes`; past it the stream is cancelled. */
const readWebBody = (source: Request, maxBytes: number): Effect.Effect<string, ApiFailure> =>
  Effect.tryPromise({
    try: async () => {
      if (source.body === null) return ""
      const reader = source.body.getReader()
      const chunks: Array<Uint8Array> = []
      let size = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        size += value.byteLength
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined)
          throw tooLarge(maxBytes)
        }
        chunks.push(value)
      }
      return Buffer.concat(chunks, size).toString("utf8")
    },
    catch: (error) => (error instanceof ApiFailure ? error : unreadable())
  })

/** Reads the whole body of a request, bounded by `maxBytes` (413 request_too_large beyond). */
export const readBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number): Effect.Effect<string, ApiFailure> => {
  const source = (request as unknown as { readonly source?: unknown }).source
  if (source instanceof Readable) return readNodeBody(source, maxBytes)
  if (typeof Request !== "undefined" && source instanceof Request) return readWebBody(source, maxBytes)
  return request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes)),
    Effect.mapError(() => tooLarge(maxBytes))
  )
}

/**
 * How deep a JSON body may nest objects and arrays. The API's bodies nest two levels; schema
 * decoding and the formatting of its errors recurse, so a deeper body (a 1 MiB body can nest half a
 * million levels) would overflow the stack.
 */
export const MAX_JSON_DEPTH = 32

/**
 * Text no store keeps as sent: U+0000 (PostgreSQL text cannot hold it) and a lone UTF-16 surrogate
 * (a JSON escape such as "\ud800"; PostgreSQL would store U+FFFD, SQLite the unpaired unit). In
 * unicode mode a well-formed surrogate pair is one code point, so `\p{Cs}` matches lone ones only.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what this refuses
const UNSTORABLE_TEXT = /[\u0000\p{Cs}]/u

/** What a parsed JSON body may not hold, found by `inspectJson`. */
export type JsonBodyProblem =
  | { readonly _tag: "TooDeep" }
  /**
   * `path`: the path of the string as `param` names it (`holder.name`, `program_ids.1`,
   * `metadata[note]`; "" for the body itself); for a key, the path of the object holding it.
   */
  | { readonly _tag: "UnstorableText"; readonly path: string }

/**
 * The one body field whose keys are the caller's own data (docs/api.md#metadata): a key of it is
 * named in brackets after the field (`metadata[note]`), as its decoding names it (core's
 * platform/Metadata.ts), since a key may hold dots.
 */
const KEYED_FIELD = "metadata"

/**
 * The first problem of a parsed JSON body, in document order, in one iterative walk (a body within
 * the size limit can nest deeper than the call stack): objects and arrays nested deeper than
 * MAX_JSON_DEPTH, or a string no store keeps as sent (U+0000, a lone surrogate), so both stores
 * answer alike. Object keys are text of the body too (metadata keys are stored as sent): a bad
 * key is named by the object holding it (`metadata`; null at the top), never repeated.
 */
export const inspectJson = (value: unknown): JsonBodyProblem | undefined => {
  // [value, its path, its depth, whether its keys are a KEYED_FIELD's]
  const pending: Array<readonly [unknown, string, number, boolean]> = [[value, "", 0, false]]
  while (pending.length > 0) {
    const [item, path, depth, keyed] = pending.pop()!
    if (typeof item === "string") {
      if (UNSTORABLE_TEXT.test(item)) return { _tag: "UnstorableText", path }
    } else if (typeof item === "object" && item !== null) {
      if (depth + 1 > MAX_JSON_DEPTH) return { _tag: "TooDeep" }
      const entries = Object.entries(item)
      for (const [key] of entries) if (UNSTORABLE_TEXT.test(key)) return { _tag: "UnstorableText", path }
      const bracketed = keyed && !Array.isArray(item)
      // Pushed in reverse, popped in document order.
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, child] = entries[index]!
        const childPath = appendParamSegment(path, bracketed ? `[${key}]` : key)
        pending.push([child, childPath, depth + 1, !bracketed && key === KEYED_FIELD])
      }
    }
  }
  return undefined
}

/**
 * The 400 of a body sent to an operation that declares none (docs/api.md#requests-and-responses),
 * or undefined for `{}`: its first field, named as any unknown field is; for JSON that is not an
 * object, the body itself. `parsed` is the body as the pipeline parsed it.
 */
export const bodyOfNoFieldsFailure = (parsed: unknown): ApiFailure | undefined => {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return apiFailure("invalid_request", "Invalid request: this operation takes no body fields; send no body, or {}.", null)
  }
  for (const name in parsed) if (Object.hasOwn(parsed, name)) return unknownParameterFailure(name)
  return undefined
}

/**
 * Makes the request answer as handlers must see it once the pipeline has read its body: its body
 * accessors answer from the text already read (the underlying stream is consumed), and its
 * Content-Type is JSON: the pipeline has refused any other type for a body, and an empty body is no
 * body whatever type it declares (the router picks its payload parser by Content-Type, and would
 * hand an empty multipart body to a multipart parser that cannot run here). `parsed` is the body
 * as the pipeline parsed it to check it (undefined for an empty body): `json` answers with it
 * rather than parsing the text again, and the headers are made once, not at every read of them.
 *
 * The request object is changed in place (own properties shadowing its class's accessors), not
 * wrapped and provided anew: providing a service copies the fiber's whole context (every service
 * of the platform) and FiberRefs twice, a measurable share of a request's CPU
 * (docs/operations.md#volume, "The Node side, profiled"). The object is this request's alone.
 */
export const answerFromReadBody = (request: HttpServerRequest.HttpServerRequest, text: string, parsed: unknown): void => {
  // An empty body is an empty object (docs/api.md#requests-and-responses): a POST whose body
  // fields are all optional (resend) works without one, and a missing required field is named as
  // the param (replay without a body → param begin), not reported as malformed.
  const json = Effect.succeed(text.trim() === "" ? {} : parsed)
  const headers = Headers.set(request.headers, "content-type", "application/json")
  Object.defineProperties(request, {
    text: { value: Effect.succeed(text), configurable: true },
    json: { value: json, configurable: true },
    arrayBuffer: { get: () => Effect.succeed(new TextEncoder().encode(text).buffer), configurable: true },
    urlParamsBody: { get: () => Effect.succeed(UrlParams.fromInput(new URLSearchParams(text))), configurable: true },
    headers: { value: headers, configurable: true }
  })
}

/**
 * Makes the request answer as an OAuth protocol handler must see it once the pipeline has read its
 * body (in place, as `answerFromReadBody`): `text` answers from the text already read, and the
 * headers are the client's own (the handler checks for `application/x-www-form-urlencoded` itself
 * and answers in OAuth's format, docs/oauth.md).
 */
export const answerFromReadFormBody = (request: HttpServerRequest.HttpServerRequest, text: string): void => {
  Object.defineProperty(request, "text", { value: Effect.succeed(text), configurable: true })
}
