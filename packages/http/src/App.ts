import { HttpApiBuilder, HttpApp, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import {
  defaultSettings,
  type IssuingServices,
  type IssuingSettings,
  type IssuingStores,
  IssuingConfig,
  ServicesLive,
  Vault
} from "@issuing/core"
import { type Effect, Layer, ManagedRuntime, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { IssuingApi } from "./Api.js"
import { clientErrorListener, connectListener } from "./ClientErrors.js"
import { ApiKeysHandlersLive } from "./handlers/ApiKeysHandlers.js"
import { CardEmbedHandlersLive, CardsHandlersLive, SimulateAuthorizationsHandlersLive } from "./handlers/CardsHandlers.js"
import { EventsHandlersLive } from "./handlers/EventsHandlers.js"
import {
  FinancialAccountsHandlersLive,
  SimulateTransfersHandlersLive,
  TransactionsHandlersLive,
  TransfersHandlersLive,
  WalletsHandlersLive
} from "./handlers/LedgerHandlers.js"
import { MetaHandlersLive } from "./handlers/MetaHandlers.js"
import { OAuthClientsHandlersLive, OAuthGrantsHandlersLive, OAuthInteractionsHandlersLive } from "./handlers/OAuthClientsHandlers.js"
import { OAuthProtocolHandlersLive } from "./handlers/OAuthProtocolHandlers.js"
import { ProgramsHandlersLive } from "./handlers/ProgramsHandlers.js"
import { WebhookDeliveriesHandlersLive, WebhookSubscriptionsHandlersLive } from "./handlers/WebhooksHandlers.js"
import { OrganizationAuthLive, ProgramAuthLive } from "./middleware/Auth.js"
import { requestPipeline } from "./middleware/RequestPipeline.js"
import { makeRouteTable } from "./middleware/RouteTable.js"
import { type TelemetryLayer, traceRequests } from "./Telemetry.js"

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
   * it is stripped before routing. Include it in `settings.baseUrl` so embed and doc URLs point here.
   */
  readonly basePath?: string | undefined
  /**
   * Traces and metrics through OpenTelemetry (docs/observability.md): `telemetryLayer({ spanProcessor,
   * metricReader })` or `telemetryFromEnv(process.env)`. Off when not given.
   */
  readonly telemetry?: TelemetryLayer | undefined
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
  /** Stops accepting work and closes the database. */
  readonly dispose: () => Promise<void>
}

const HandlersLive = Layer.mergeAll(
  ProgramsHandlersLive,
  ApiKeysHandlersLive,
  CardsHandlersLive,
  CardEmbedHandlersLive,
  SimulateAuthorizationsHandlersLive,
  WalletsHandlersLive,
  FinancialAccountsHandlersLive,
  TransfersHandlersLive,
  TransactionsHandlersLive,
  SimulateTransfersHandlersLive,
  EventsHandlersLive,
  WebhookSubscriptionsHandlersLive,
  WebhookDeliveriesHandlersLive,
  OAuthClientsHandlersLive,
  OAuthInteractionsHandlersLive,
  OAuthGrantsHandlersLive,
  OAuthProtocolHandlersLive,
  MetaHandlersLive
).pipe(Layer.provide(Layer.mergeAll(OrganizationAuthLive, ProgramAuthLive)))

/** The API's routes, read once from its definition: the request pipeline and telemetry match requests against them. */
const ROUTES = makeRouteTable(IssuingApi)

/** The platform's layers over a store: domain services, the HttpApi and the request pipeline. */
export const issuingLayer = <E>(store: StoreLayer<E>, settings: IssuingSettings, vaultKeys: ReadonlyArray<Buffer>) => {
  const api = Layer.mergeAll(HttpApiBuilder.api(IssuingApi).pipe(Layer.provide(HandlersLive)), requestPipeline(ROUTES)).pipe(
    Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)),
    Layer.provideMerge(HttpServer.layerContext)
  )
  return api.pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(Layer.mergeAll(IssuingConfig.layer(settings), Vault.layer(vaultKeys))),
    Layer.provideMerge(store)
  )
}

const normalizeBasePath = (basePath: string | undefined) => {
  if (basePath === undefined || basePath === "" || basePath === "/") return ""
  return `/${basePath.replace(/^\/+|\/+$/g, "")}`
}

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
  const layer = issuingLayer(options.store, settings, options.vaultKeys)
  // Telemetry first, so the store's start-up (migrations) is traced too.
  const runtime = ManagedRuntime.make(options.telemetry === undefined ? layer : layer.pipe(Layer.provideMerge(options.telemetry)))
  const built = (await runtime.runPromise(HttpApiBuilder.httpApp)) as HttpApp.Default
  const app = options.telemetry === undefined ? built : traceRequests(built, ROUTES)
  // @effect/platform's own server span records the full URL and query, where an embed session
  // token travels: off; traceRequests records the route template instead.
  const handlerRuntime = Runtime.setFiberRef(await runtime.runtime(), HttpMiddleware.currentTracerDisabledWhen, () => true)
  const nodeHandler = await Runtime.runPromise(handlerRuntime)(NodeHttpServer.makeHandler(app))
  const webHandler = HttpApp.toWebHandlerRuntime(handlerRuntime)(app)
  const basePath = normalizeBasePath(options.basePath)

  const listener =
    basePath === ""
      ? nodeHandler
      : (request: IncomingMessage, response: ServerResponse) => {
          const url = request.url ?? "/"
          if (url === basePath || url.startsWith(`${basePath}/`) || url.startsWith(`${basePath}?`)) {
            request.url = url.slice(basePath.length) || "/"
            if (!request.url.startsWith("/")) request.url = `/${request.url}`
          }
          nodeHandler(request, response)
        }

  const handler =
    basePath === ""
      ? (request: Request) => webHandler(request)
      : (request: Request) => {
          const url = new URL(request.url)
          if (url.pathname === basePath || url.pathname.startsWith(`${basePath}/`)) {
            url.pathname = url.pathname.slice(basePath.length) || "/"
            return webHandler(new Request(url, request))
          }
          return webHandler(request)
        }

  return {
    handler,
    listener,
    clientErrorListener: clientErrorListener(() => settings.baseUrl),
    connectListener: connectListener(() => settings.baseUrl),
    runtime: runtime as IssuingInstance["runtime"],
    settings,
    telemetry: options.telemetry !== undefined,
    dispose: () => runtime.dispose()
  }
}

/** Runs an effect on a platform instance's services. */
export const runOn = <A, E>(instance: IssuingInstance, effect: Effect.Effect<A, E, any>): Promise<A> =>
  instance.runtime.runPromise(effect as Effect.Effect<A, E, never>)
