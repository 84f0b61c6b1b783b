/** The console's client of the public /v1 API: the credential as a bearer token, the program as X-Program-ID. */

/** A failure the API answered (its error envelope, docs/api.md#errors) or a request that got no answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null,
    readonly requestId: string | null
  ) {
    super(message)
  }
}

/** One page of a list (docs/api.md#paging). */
export interface Page<T> {
  readonly data: ReadonlyArray<T>
  readonly total_count: number
}

export type Query = Record<string, string | number | boolean | undefined | null>

const newIdempotencyKey = () => {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** A client bound to one credential; `program` is read on every request (the operator may switch). */
export class Api {
  constructor(
    private readonly basePath: string,
    private readonly credential: string,
    private readonly program: () => string | null
  ) {}

  /** GET with a query; undefined and empty values are left out. */
  get<T>(path: string, query: Query = {}, scope: "program" | "organization" = "program"): Promise<T> {
    return this.send<T>("GET", path, query, undefined, scope)
  }

  /** POST (with a fresh Idempotency-Key, so a retried click is never done twice), PATCH or DELETE. */
  write<T>(method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown, scope: "program" | "organization" = "program"): Promise<T> {
    return this.send<T>(method, path, {}, body, scope)
  }

  private async send<T>(method: string, path: string, query: Query, body: unknown, scope: "program" | "organization"): Promise<T> {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== "") search.set(name, String(value))
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.credential}`, accept: "application/json" }
    const program = this.program()
    if (scope === "program" && program !== null) headers["x-program-id"] = program
    if (method === "POST") headers["idempotency-key"] = newIdempotencyKey()
    if (body !== undefined) headers["content-type"] = "application/json"
    const url = `${this.basePath}/v1${path}${search.size > 0 ? `?${search}` : ""}`
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        credentials: "omit",
        cache: "no-store"
      })
    } catch (error) {
      throw new ApiError(0, "network_error", `The server did not answer (${(error as Error).message}).`, null, null)
    }
    const text = await response.text()
    let parsed: any
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!response.ok) {
      const envelope = parsed?.error
      throw new ApiError(
        response.status,
        envelope?.code ?? envelope?.type ?? `http_${response.status}`,
        envelope?.message ?? `The server answered ${response.status}.`,
        envelope?.param ?? null,
        envelope?.request_id ?? response.headers.get("request-id")
      )
    }
    return parsed as T
  }
}
