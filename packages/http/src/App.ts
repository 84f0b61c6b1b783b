import { HttpApiBuilder, HttpApp, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import {
  CardAuthorizations,
  type AuthorizationDecider,
  Cards,
  defaultSettings,
  EmbeddedAuthorizationDecider,
  type EmbeddedDeciderOptions,
  Idempotency,
  runDeliveryWorker,
  type IssuingServices,
  type IssuingSettings,
  type IssuingStores,
  IssuingConfig,
  RateLimiter,
  ServicesLive,
  Vault,
  Webhooks
} from "@issuing/core"
import { Clock, Context, Effect, Fiber, Layer, ManagedRuntime, Runtime, Schedule } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Server } from "node:net"
import type { Duplex } from "node:stream"
import { IssuingApi } from "./Api.js"
import { clientErrorListener, connectListener } from "./ClientErrors.js"
import { ApiKeysHandlersLive } from "./handlers/ApiKeysHandlers.js"
import { CardholdersHandlersLive } from "./handlers/CardholdersHandlers.js"
import { AuthorizationEndpointsHandlersLive } from "./handlers/AuthorizationEndpointsHandlers.js"
import {
  CardEmbedHandlersLive,
  CardsHandlersLive,
  SimulateAuthorizationsHandlersLive,
  SimulateTransactionsHandlersLive
} from "./handlers/CardsHandlers.js"
import { DisputesHandlersLive, NetworkDisputesHandlersLive, SimulateDisputesHandlersLive } from "./handlers/DisputesHandlers.js"
import { EventsHandlersLive } from "./handlers/EventsHandlers.js"
import { NetworkCardMessagesHandlersLive, NetworkRightLive } from "./handlers/NetworkHandlers.js"
import {
  FinancialAccountsHandlersLive,
  NetworkTransfersHandlersLive,
  SettlementReportsHandlersLive,
  SimulateTransfersHandlersLive,
  TransactionsHandlersLive,
  TransfersHandlersLive,
  WalletsHandlersLive
} from "./handlers/LedgerHandlers.js"
import { MetaHandlersLive } from "./handlers/MetaHandlers.js"
import { OAuthClientsHandlersLive, OAuthGrantsHandlersLive, OAuthInteractionsHandlersLive } from "./handlers/OAuthClientsHandlers.js"
import { OAuthProtocolHandlersLive } from "./handlers/OAuthProtocolHandlers.js"
import { ProgramsHandlersLive } from "./handlers/ProgramsHandlers.js"
import { WebhookPortalHandlersLive, WebhookPortalSessionsHandlersLive } from "./handlers/WebhookPortalHandlers.js"
import { WebhookDeliveriesHandlersLive, WebhookSubscriptionsHandlersLive } from "./handlers/WebhooksHandlers.js"
import { OrganizationScopedLive, ProgramScopedLive } from "./middleware/Scopes.js"
import { requestPipeline } from "./middleware/RequestPipeline.js"
import { makeRouteTable } from "./middleware/RouteTable.js"
import { baseUrlProblems, normalizeBasePath, privateTargetsProblem } from "./Mount.js"
import { deliveryQueueMetrics, type TelemetryLayer, traceRequests, withDeliveryTelemetry } from "./Telemetry.js"

/** What a store package's `layer(...)` provides. */
export type StoreLayer<E = unknown> = Layer.Layer<IssuingStores | SqlClient.SqlClient, E>

/** Options of `createIssuing`. */
export interface IssuingOptions<E = unknown> {
  /** The store: `SqliteStore.layer({ filename })` or `PgStore.layer({ url })`. Migrations run on start. */
  readonly store: StoreLayer<E>
  /** Vault master keys (32 bytes each), current first. */
  readonly vaultKeys: ReadonlyArray<Buffer>
  /** Settings; anything not given takes its documented default (README.md#configuration). */
  readonly settings?: Partial<IssuingSettings> | undefined
  /**
   * The path the host app mounts the platform under (e.g. `/issuing`); requests arrive with it and
   * it is stripped before routing. `settings.baseUrl` must end with it, so embed and doc URLs and the
   * console's assets point here (`configFromEnv` derives it so; start-up warns when it does not).
   */
  readonly basePath?: string | undefined
  /**
   * Traces and metrics through OpenTelemetry (docs/observability.md): `telemetryLayer({ spanProcessor,
   * metricReader })` or `telemetryFromEnv(process.env)`. Off when not given.
   */
  readonly telemetry?: TelemetryLayer | undefined
  /**
   * Runs the platform's background work in this process (default true): webhook delivery and the
   * hourly purges of expired idempotency keys and embed sessions. `false` leaves it to a separate
   * `issuing worker` process on the same database (docs/operations.md#background-work).
   */
  readonly background?: boolean | undefined
  /** Where the one start-up line (which background work runs where) goes; default stdout, `null` for none. */
  readonly log?: ((line: string) => void) | null | undefined
  /**
   * Shifts the platform's clock by this many milliseconds (default 0). For tests and simulations
   * only: a worker started a day ahead releases the holds that expire within that day
   * (docs/card-transactions.md#expiry). The CLI reads `ISSUING_TEST_CLOCK_OFFSET_MS`.
   */
  readonly clockOffsetMs?: number | undefined
  /**
   * Real-time authorization decisions in-process (docs/card-transactions.md#real-time-decisions):
   * asked with the same request an authorization endpoint would receive, answering the same
   * answer. Given, it is asked instead of any program's stored authorization endpoint.
   */
  readonly authorizationDecider?: AuthorizationDecider | undefined
  /** How long the decider's answer is waited for: an integer from 100 to 5000 ms (default 2000). */
  readonly authorizationDeciderTimeoutMs?: number | undefined
  /** What applies when the decider does not answer in time, throws or answers ill-typed (default `"DECLINE"`). */
  readonly authorizationDeciderTimeoutDecision?: "DECLINE" | "APPROVE" | undefined
}

/** A running platform: a web-standard handler, a Node request listener and the services behind them. */
export interface IssuingInstance {
  /** Handles a web-standard Request (Deno, Bun, Hono, Next.js route handlers, …). */
  readonly handler: (request: Request) => Promise<Response>
  /** A node:http request listener (plain Node, Express, Fastify's raw server, …). */
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void
  /**
   * A node:http `clientError` listener: requests Node's parser refuses (oversized headers, not
   * HTTP) get the error envelope instead of Node's bare status line.
   */
  readonly clientErrorListener: (error: Error, socket: Duplex) => void
  /** A node:http `connect` listener: CONNECT requests get the error envelope (405) instead of a closed connection. */
  readonly connectListener: (request: IncomingMessage, socket: Duplex) => void
  /** Runs an effect against the platform's services (the CLI and background workers use it). */
  readonly runtime: ManagedRuntime.ManagedRuntime<IssuingServices | IssuingStores | SqlClient.SqlClient | IssuingConfig | Vault, unknown>
  readonly settings: IssuingSettings
  /** True when built with a telemetry layer (the background workers then report their own spans and metrics). */
  readonly telemetry: boolean
  /** Stops the background work, then closes the database. */
  readonly dispose: () => Promise<void>
}

const HandlersLive = Layer.mergeAll(
  ProgramsHandlersLive,
  ApiKeysHandlersLive,
  CardsHandlersLive,
  CardEmbedHandlersLive,
  SimulateAuthorizationsHandlersLive,
  SimulateTransactionsHandlersLive,
  WalletsHandlersLive,
  CardholdersHandlersLive,
  FinancialAccountsHandlersLive,
  TransfersHandlersLive,
  TransactionsHandlersLive,
  SimulateTransfersHandlersLive,
  NetworkTransfersHandlersLive,
  SettlementReportsHandlersLive,
  DisputesHandlersLive,
  SimulateDisputesHandlersLive,
  NetworkDisputesHandlersLive,
  NetworkCardMessagesHandlersLive,
  EventsHandlersLive,
  WebhookSubscriptionsHandlersLive,
  WebhookDeliveriesHandlersLive,
  WebhookPortalSessionsHandlersLive,
  WebhookPortalHandlersLive,
  AuthorizationEndpointsHandlersLive,
  OAuthClientsHandlersLive,
  OAuthInteractionsHandlersLive,
  OAuthGrantsHandlersLive,
  OAuthProtocolHandlersLive,
  MetaHandlersLive
).pipe(Layer.provide(Layer.mergeAll(OrganizationScopedLive, ProgramScopedLive, NetworkRightLive)))

/**
 * The API's routes, read once from its definition, per environment (production's leave the
 * sandbox-only routes out): the request pipeline and telemetry match requests against them.
 */
const ROUTES = { sandbox: makeRouteTable(IssuingApi, "sandbox"), production: makeRouteTable(IssuingApi, "production") }

/** The platform's layers over a store: domain services, the HttpApi and the request pipeline. */
export const issuingLayer = <E>(
  store: StoreLayer<E>,
  settings: IssuingSettings,
  vaultKeys: ReadonlyArray<Buffer>,
  decider?: EmbeddedDeciderOptions | undefined
) => {
  const api = Layer.mergeAll(
    HttpApiBuilder.api(IssuingApi).pipe(Layer.provide(HandlersLive)),
    requestPipeline(ROUTES[settings.environment])
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)),
    Layer.provideMerge(HttpServer.layerContext)
  )
  return api.pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(
      Layer.mergeAll(
        IssuingConfig.layer(settings),
        Vault.layer(vaultKeys),
        decider === undefined ? Layer.empty : EmbeddedAuthorizationDecider.layer(decider)
      )
    ),
    Layer.provideMerge(store)
  )
}

/** Repeats a housekeeping step hourly; a failure is logged and the next hour tries again. */
const hourly = <E, R>(name: string, step: Effect.Effect<unknown, E, R>) =>
  step.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning(`${name} failed`, cause)),
    Effect.repeat(Schedule.spaced("1 hour")),
    Effect.asVoid
  )

/** Holds released per transaction of the expiry sweep. */
const EXPIRY_BATCH = 100

/**
 * Releases the card holds whose expiry has passed (docs/card-transactions.md#expiry): a sweep now
 * and every 30 seconds, so a hold is released at most about a minute late; each sweep takes
 * batches until none is left. Several workers on one database never release a hold twice
 * (CardAuthorizations.expireDue). A failed sweep is logged and the next one tries again.
 */
const holdExpiry = Effect.flatMap(CardAuthorizations, (authorizations) =>
  Effect.gen(function* () {
    while ((yield* authorizations.expireDue(EXPIRY_BATCH)) === EXPIRY_BATCH) {}
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("Hold expiry failed", cause)),
    Effect.repeat(Schedule.spaced("30 seconds")),
    Effect.asVoid
  )
)

/** A clock `offsetMs` ahead of the system's (tests and simulations: `IssuingOptions.clockOffsetMs`). */
const offsetClock = (offsetMs: number): Clock.Clock => {
  const system = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => system.unsafeCurrentTimeMillis() + offsetMs,
    currentTimeMillis: Effect.sync(() => system.unsafeCurrentTimeMillis() + offsetMs),
    unsafeCurrentTimeNanos: () => system.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => system.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n),
    sleep: (duration) => system.sleep(duration)
  }
}

/**
 * The platform's background work, all of it, for as long as it runs: the webhook delivery worker
 * (a span per attempt and the queue's gauges when traced), the release of expired card holds, and the hourly purges of idempotency
 * keys past their 24 h, of embed and webhook portal sessions a day past expiry, and of rate buckets idle a day. `createIssuing` forks it (unless
 * `background: false`) and `issuing worker` runs it alone; several copies on one database are safe
 * (claims use SKIP LOCKED and leases, purges are idempotent deletes).
 */
export const backgroundWork = (instance: Pick<IssuingInstance, "telemetry">) =>
  Effect.all(
    [
      instance.telemetry ? withDeliveryTelemetry(runDeliveryWorker()) : runDeliveryWorker(),
      instance.telemetry ? deliveryQueueMetrics : Effect.void,
      holdExpiry,
      hourly(
        "Idempotency purge",
        Effect.flatMap(Idempotency, (idempotency) => idempotency.purgeExpired)
      ),
      hourly(
        "Embed session purge",
        Effect.flatMap(Cards, (cards) => cards.purgeExpiredEmbedSessions)
      ),
      hourly(
        "Webhook portal session purge",
        Effect.flatMap(Webhooks, (webhooks) => webhooks.purgeExpiredPortalSessions)
      ),
      hourly(
        "Rate bucket purge",
        Effect.flatMap(RateLimiter, (limiter) => limiter.purgeIdle)
      )
    ],
    { concurrency: "unbounded", discard: true }
  )

const defaultLog = (line: string) => void process.stdout.write(`issuing: ${line}\n`)

/** The platform cannot open the card data it holds with the vault keys it was given. */
export class VaultKeysUnusable extends Error {
  constructor(readonly problems: ReadonlyArray<string>) {
    super(`the vault keys cannot open the card data this database holds:\n  ${problems.join("\n  ")}`)
    this.name = "VaultKeysUnusable"
  }
}

// A key dropped from ISSUING_VAULT_KEY would otherwise surface only as failing reveals: refuse to
// start, naming the key (one card per key id is opened, docs/operations.md#the-vault-key).
const refuseUnopenableCards = async (runtime: ManagedRuntime.ManagedRuntime<Cards, unknown>) => {
  const problems = await runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.vaultProblems))
  if (problems.length === 0) return
  await runtime.dispose()
  throw new VaultKeysUnusable(problems)
}

const METADATA_PATH = "/.well-known/oauth-authorization-server"

/**
 * The platform's own path for a request path under the mount, or undefined to leave it as it is:
 * `/issuing/v1/…` → `/v1/…`; and RFC 8414's path insertion, where a client of the issuer
 * `https://host/issuing` asks `/.well-known/oauth-authorization-server/issuing` for its metadata
 * (docs/oauth.md#discovery-under-a-mount-path).
 */
const mountedRoute =
  (basePath: string) =>
  (pathname: string): string | undefined => {
    if (pathname === basePath || pathname.startsWith(`${basePath}/`)) return pathname.slice(basePath.length) || "/"
    if (pathname === `${METADATA_PATH}${basePath}`) return METADATA_PATH
    return undefined
  }

/**
 * The runtime each request's fiber starts from: the platform's own services left out, the
 * framework's kept. Every service a request reaches was taken from the context when its layer was
 * built (the request pipeline's, the middlewares', the handler groups' — a group's handlers run
 * in the context it captured, merged with the request's), so the request's fiber needs none of
 * them, and every context write of a request (its request, scope, route, program, transaction:
 * about twelve per transfer) copies the whole context: 39 services before, 7 now
 * (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
const requestRuntime = <R>(runtime: Runtime.Runtime<R>): Runtime.Runtime<R> =>
  Runtime.make({
    context: Context.unsafeMake(
      new Map([...runtime.context.unsafeMap].filter(([key]) => key.startsWith("@effect/platform/")))
    ) as Context.Context<R>,
    fiberRefs: runtime.fiberRefs,
    runtimeFlags: runtime.runtimeFlags
  })

/**
 * Starts the platform over a store and returns handlers a host app mounts under its own path.
 *
 * ```ts
 * const issuing = await createIssuing({ store: SqliteStore.layer({ filename: "issuing.db" }), vaultKeys: [key] })
 * http.createServer((req, res) => req.url?.startsWith("/issuing/") ? issuing.listener(req, res) : myApp(req, res))
 * ```
 */
export const createIssuing = async <E>(options: IssuingOptions<E>): Promise<IssuingInstance> => {
  const settings = defaultSettings(options.settings)
  const decider: EmbeddedDeciderOptions | undefined =
    options.authorizationDecider === undefined
      ? undefined
      : {
          decider: options.authorizationDecider,
          timeoutMs: options.authorizationDeciderTimeoutMs,
          timeoutDecision: options.authorizationDeciderTimeoutDecision
        }
  const base = issuingLayer(options.store, settings, options.vaultKeys, decider)
  // The clock is set before anything is built, so fibers forked while building (the write lane's) see it too.
  const layer = options.clockOffsetMs ? base.pipe(Layer.provide(Layer.setClock(offsetClock(options.clockOffsetMs)))) : base
  // Telemetry first, so the store's start-up (migrations) is traced too. Without it nothing reads a
  // span, so none is made: Effect's default tracer would still build one per SQL statement and
  // transaction (`@effect/sql`'s `sql.execute`), ≈ 3 % of a transfer's CPU (docs/observability.md).
  const runtime = ManagedRuntime.make(
    options.telemetry === undefined
      ? layer.pipe(Layer.provide(Layer.setTracerEnabled(false)))
      : layer.pipe(Layer.provideMerge(options.telemetry))
  )
  const built = (await runtime.runPromise(HttpApiBuilder.httpApp)) as HttpApp.Default
  await refuseUnopenableCards(runtime)
  const app = options.telemetry === undefined ? built : traceRequests(built, ROUTES[settings.environment])
  // @effect/platform's own server span records the full URL and query, where an embed session
  // token travels: off; traceRequests records the route template instead.
  const handlerRuntime = requestRuntime(Runtime.setFiberRef(await runtime.runtime(), HttpMiddleware.currentTracerDisabledWhen, () => true))
  const nodeHandler = await Runtime.runPromise(handlerRuntime)(NodeHttpServer.makeHandler(app))
  const webHandler = HttpApp.toWebHandlerRuntime(handlerRuntime)(app)
  const basePath = normalizeBasePath(options.basePath)

  const log = options.log === undefined ? defaultLog : options.log
  for (const problem of baseUrlProblems(settings.baseUrl, basePath)) log?.(`warning: ${problem}`)

  // What the host's server really listens on is known at its first request only (the platform
  // does not open it): said once, when private targets are allowed off loopback.
  let listenChecked = false
  const checkListen = (request: IncomingMessage) => {
    if (listenChecked) return
    listenChecked = true
    const bound = (request.socket as { server?: Server }).server?.address()
    const problem = privateTargetsProblem(typeof bound === "object" && bound !== null ? bound.address : undefined, settings)
    if (problem !== undefined) log?.(`warning: ${problem}`)
  }
  const route = mountedRoute(basePath)
  const listener =
    basePath === ""
      ? (request: IncomingMessage, response: ServerResponse) => {
          checkListen(request)
          nodeHandler(request, response)
        }
      : (request: IncomingMessage, response: ServerResponse) => {
          checkListen(request)
          const url = request.url ?? "/"
          const query = url.indexOf("?")
          const routed = route(query < 0 ? url : url.slice(0, query))
          if (routed !== undefined) request.url = routed + (query < 0 ? "" : url.slice(query))
          nodeHandler(request, response)
        }

  const handler =
    basePath === ""
      ? (request: Request) => webHandler(request)
      : (request: Request) => {
          const url = new URL(request.url)
          const routed = route(url.pathname)
          if (routed === undefined) return webHandler(request)
          url.pathname = routed
          return webHandler(new Request(url, request))
        }

  const telemetry = options.telemetry !== undefined
  const background = options.background ?? true
  const worker = background ? runtime.runFork(backgroundWork({ telemetry }) as Effect.Effect<void, unknown, any>) : undefined
  log?.(
    background
      ? "background work (webhook delivery, hold expiry, purges) runs in this process"
      : "background work (webhook delivery, hold expiry, purges) is left to a separate `issuing worker`"
  )
  let disposing: Promise<void> | undefined
  return {
    handler,
    listener,
    clientErrorListener: clientErrorListener(() => settings.baseUrl),
    connectListener: connectListener(() => settings.baseUrl),
    runtime: runtime as IssuingInstance["runtime"],
    settings,
    telemetry,
    dispose: () =>
      (disposing ??= (async () => {
        // Deliveries in flight finish and are recorded before the database closes.
        if (worker !== undefined) await runtime.runPromise(Fiber.interrupt(worker))
        await runtime.dispose()
      })())
  }
}

/** Runs an effect on a platform instance's services. */
export const runOn = <A, E>(instance: IssuingInstance, effect: Effect.Effect<A, E, any>): Promise<A> =>
  instance.runtime.runPromise(effect as Effect.Effect<A, E, never>)
