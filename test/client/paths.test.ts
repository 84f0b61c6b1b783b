import { IssuingClient } from "@issuing/client"
import { IssuingApi } from "@issuing/http"
import { describe, expect, it } from "vitest"
import { makeRouteTable } from "../../packages/http/src/middleware/RouteTable.js"

// The Promise client's paths are written by hand: each one must be a route of the server, with
// the method the client sends. Both sides come from code: every method of every resource of a real
// IssuingClient is called over a fetch that records the request, and each request is matched
// against the route table the request pipeline itself routes by (read from the HttpApi).

const ID = "id_0"

interface Sent {
  readonly call: string
  readonly method: string
  readonly pathname: string
}

/** Calls every function of every resource of a client whose fetch records the requests instead of sending them. */
const sentByEveryMethod = async (): Promise<ReadonlyArray<Sent>> => {
  const sent: Array<Sent> = []
  let current = ""
  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    sent.push({ call: current, method: init?.method ?? "GET", pathname: url.pathname })
    return new Response(JSON.stringify({ data: [], total_count: 0, has_more: false }), {
      status: 200,
      headers: { "content-type": "application/json" }
    })
  }
  const client = new IssuingClient({
    apiKey: "sk_test",
    baseUrl: "http://issuing.test",
    programId: ID,
    fetch: recordingFetch,
    maxRetries: 0
  })
  // Resources and their groups (`oauth.interactions`), to any depth.
  const visit = async (prefix: string, methods: Record<string, unknown>) => {
    for (const [name, method] of Object.entries(methods)) {
      if (typeof method === "object" && method !== null) await visit(`${prefix}.${name}`, method as Record<string, unknown>)
      if (typeof method !== "function") continue
      current = `${prefix}.${name}`
      try {
        // An id where the method takes one, else taken as params: only the path is checked.
        await method(ID, {}, {})
      } catch {
        // webhooks.verify sends nothing and throws on a bad signature; the count below catches a
        // request method that threw before sending.
      }
    }
  }
  for (const [resource, methods] of Object.entries(client)) {
    if (typeof methods === "object" && methods !== null) await visit(resource, methods as Record<string, unknown>)
  }
  return sent
}

describe("the Promise client's paths", () => {
  it("every path the client calls is a route of the server, with the same method", async () => {
    const routes = makeRouteTable(IssuingApi)
    const sent = await sentByEveryMethod()
    // Every hand-written path of the client (its methods but webhooks.verify, which is local).
    expect(sent.length).toBeGreaterThanOrEqual(54)
    expect(new Set(sent.map((request) => request.call)).size).toBe(sent.length)
    for (const request of sent) {
      const match = routes.match(request.method, request.pathname)
      expect(match._tag, `${request.call}: ${request.method} ${request.pathname}`).toBe("Matched")
      // The route matched is the one the path spells out, not a parameterised neighbour
      // (`/v1/cards/search-by-pan` read as `/v1/cards/:card_id`).
      if (match._tag === "Matched") {
        expect(match.template.replace(/:[a-z_]+/g, ID), request.call).toBe(request.pathname)
      }
    }
  })

  it("a misspelled path is not matched", () => {
    const routes = makeRouteTable(IssuingApi)
    expect(routes.match("POST", `/v1/cards/${ID}/frezee`)._tag).not.toBe("Matched")
    expect(routes.match("GET", "/v1/walets")._tag).not.toBe("Matched")
    expect(routes.match("DELETE", `/v1/cards/${ID}`)._tag).toBe("MethodNotAllowed")
    const searchByPanAsId = routes.match("GET", "/v1/cards/search-by-pan")
    expect(searchByPanAsId._tag === "Matched" && searchByPanAsId.template).toBe("/v1/cards/:card_id")
  })
})
