import { HttpApi, type HttpApiGroup } from "@effect/platform"
import type { Environment } from "@issuing/core"
import { Context, Option } from "effect"
import { CallsOut, OAuthProtocol, RequiredScope, SandboxOnly } from "../api/Annotations.js"
import { OrganizationScoped, ProgramScoped } from "../api/Security.js"
import { refusesEveryBodyField, refusesEveryQueryParameter } from "../api/UnknownParameters.js"
import { type SuccessAnswer, successAnswer } from "./SuccessAnswer.js"

/** Who may call a route: anyone, any key of the organization, or a key acting in a program. */
export type RouteScope = "public" | "organization" | "program"

interface Route {
  readonly method: string
  /** The path's segments, `null` where the path takes a parameter (`:card_id`). */
  readonly parts: ReadonlyArray<string | null>
  readonly staticSegments: number
  /** What a request matching it is answered, made once: a match allocates nothing. */
  readonly matched: Extract<RouteMatch, { _tag: "Matched" }>
}

/** The scope an OAuth access token needs on a route beyond its method's own (docs/oauth.md#access-tokens-on-v1). */
export type RequiredScopeName = "read" | "write" | "pan_reveal"

/** The outcome of matching a request against the API's routes. */
export type RouteMatch =
  | {
      readonly _tag: "Matched"
      /** The endpoint's path as declared (`/v1/cards/:card_id`): what telemetry names a route by. */
      readonly template: string
      readonly scope: RouteScope
      readonly callsOut: boolean
      /** A route that calls out: how it answers its handler's value, stored at the request's commit point. */
      readonly answer: SuccessAnswer | null
      readonly oauthProtocol: boolean
      readonly requiredScope: RequiredScopeName | null
      /** A /v1 operation that declares no query: any query parameter is unknown (400). */
      readonly refusesQuery: boolean
      /** A /v1 operation that declares no body: any body field is unknown (400). */
      readonly refusesBody: boolean
    }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

const compile = (path: string) => {
  const parts = path
    .split("/")
    .filter((segment) => segment.length > 0)
    .map((segment) => (segment.startsWith(":") ? null : segment))
  return { parts, staticSegments: parts.filter((part) => part !== null).length }
}

/**
 * The segments of a request's path, as a route's path is split: `/v1/cards/abc/` → `v1`, `cards`,
 * `abc` (one trailing slash allowed); undefined for a path no route can match (an empty segment,
 * `/v1//cards`). A request is tested only against the routes of its segment count — a tenth of
 * the table for `/v1/transfers` — by comparing strings: no regular expression per request (V8
 * discards a regular expression's compiled code at garbage collection and compiles it again at
 * its next use, which the profile of a loaded server showed as 4–5 % of its CPU in the match).
 */
const pathSegments = (pathname: string): ReadonlyArray<string> | undefined => {
  if (pathname.charCodeAt(0) !== SLASH) return undefined
  const end = pathname.length > 1 && pathname.charCodeAt(pathname.length - 1) === SLASH ? pathname.length - 1 : pathname.length
  if (end <= 1) return []
  const segments = pathname.slice(1, end).split("/")
  return segments.includes("") ? undefined : segments
}
const SLASH = 47

/** True when a request's path segments are the route's: its static segments equal, one segment per parameter. */
const matches = (route: Route, segments: ReadonlyArray<string>): boolean => {
  for (let at = 0; at < segments.length; at++) {
    const part = route.parts[at]
    if (part !== null && part !== segments[at]) return false
  }
  return true
}

/** True for an endpoint that exists only in the sandbox (the simulations, `SandboxOnly`). */
export const isSandboxOnly = (annotations: Context.Context<never>): boolean =>
  Context.getOption(annotations, SandboxOnly).pipe(Option.getOrElse(() => false))

/**
 * The API's routes with the scope each one needs, read from the HttpApi definition (a group's
 * auth middleware decides its scope). The request pipeline matches a request here before the
 * router runs, so that unknown routes (404), wrong methods (405), the body's checks,
 * authentication and the Idempotency-Key's transaction around the router are decided in one
 * place, in that order (why not in the router's middleware, and what matching twice costs:
 * docs/decisions.md#one-pipeline-before-the-router). In production the sandbox-only routes are not
 * in the table: they are unknown URLs, for any method, with or without a key (docs/api.md#errors).
 */
export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  environment: Environment = "sandbox"
) => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, mergedAnnotations, middleware }) {
      if (environment === "production" && isSandboxOnly(mergedAnnotations)) return
      const scope: RouteScope = middleware.has(ProgramScoped as any)
        ? "program"
        : middleware.has(OrganizationScoped as any)
          ? "organization"
          : "public"
      const callsOut = Context.getOption(mergedAnnotations, CallsOut).pipe(Option.getOrElse(() => false))
      const oauthProtocol = Context.getOption(mergedAnnotations, OAuthProtocol).pipe(Option.getOrElse(() => false))
      const requiredScope = Context.getOption(mergedAnnotations, RequiredScope).pipe(Option.getOrNull)
      routes.push({
        method: endpoint.method,
        ...compile(endpoint.path),
        matched: {
          _tag: "Matched",
          template: endpoint.path,
          scope,
          callsOut,
          answer: callsOut ? successAnswer(endpoint) : null,
          oauthProtocol,
          requiredScope,
          refusesQuery: refusesEveryQueryParameter(endpoint),
          refusesBody: refusesEveryBodyField(endpoint)
        }
      })
    }
  })
  // By segment count, then method: a request is tested against the routes of its own method
  // first; only a request none of them matches (404, 405) looks at the other methods' routes.
  const byShape = new Map<number, Map<string, Array<Route>>>()
  for (const route of routes) {
    const byMethod = byShape.get(route.parts.length) ?? new Map<string, Array<Route>>()
    byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), route])
    byShape.set(route.parts.length, byMethod)
  }
  return {
    match(requestMethod: string, pathname: string): RouteMatch {
      // HEAD is a GET without the body (the router and the Node server handle the rest).
      const method = requestMethod === "HEAD" ? "GET" : requestMethod
      const segments = pathSegments(pathname)
      const byMethod = segments === undefined ? undefined : byShape.get(segments.length)
      if (segments === undefined || byMethod === undefined) return NOT_FOUND
      let best: Route | undefined
      for (const route of byMethod.get(method) ?? []) {
        if ((best === undefined || route.staticSegments > best.staticSegments) && matches(route, segments)) best = route
      }
      if (best !== undefined) return best.matched
      const allow: Array<string> = []
      for (const [other, candidates] of byMethod) {
        if (other !== method && candidates.some((route) => matches(route, segments))) allow.push(other)
      }
      return allow.length > 0 ? { _tag: "MethodNotAllowed", allow: allow.sort() } : NOT_FOUND
    }
  }
}

const NOT_FOUND: RouteMatch = { _tag: "NotFound" }

export type RouteTable = ReturnType<typeof makeRouteTable>
