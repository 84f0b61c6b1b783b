import { Access, type NewOrganization } from "@issuing/core"
import { Effect, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { createIssuing, type IssuingInstance } from "./App.js"
import { clientErrorListener, connectListener } from "./ClientErrors.js"
import { resolveVaultKeys, type ServerConfig } from "./config.js"
import { storeFor } from "./Store.js"
import type { TelemetryLayer } from "./Telemetry.js"
import { type Iso8583Host, startIso8583Host } from "./iso8583/Host.js"

/** A running standalone server. */
export interface RunningServer {
  readonly url: string
  readonly instance: IssuingInstance
  /** The ISO 8583 host, when ISSUING_ISO8583_LISTEN started one (docs/iso8583.md). */
  readonly iso8583?: Iso8583Host | undefined
  /** Stops accepting connections, lets in-flight requests finish (bounded), then closes the store. */
  readonly close: () => Promise<void>
}

/** How long a graceful shutdown waits for in-flight requests. */
export const SHUTDOWN_GRACE_MS = 10_000

/**
 * On a database without any API key, creates the first organization, program and admin key (PAN
 * reveal and inbound funding enabled), whose secret is `secret` when given, and returns them — the
 * only time the random secret is shown: print or store it. `null` when keys already exist (a lost
 * key is not recovered: `issuing orgs create --name NAME` makes another organization with its own
 * admin key, README.md#the-command-line).
 */
export const bootstrapOrganization = async (instance: IssuingInstance, secret?: string | undefined): Promise<NewOrganization | null> =>
  Option.getOrNull(await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.bootstrap(secret))))

/** A server listening before the platform exists: requests wait for `open`, or get a 503 after `refuse`. */
interface EarlyServer {
  readonly server: http.Server
  /** The URL of the address it listens on. */
  readonly url: string
  /** Hands requests, the waiting ones included, and Node's parser errors to the platform. */
  readonly open: (instance: IssuingInstance) => void
  /** Start-up failed: answers the waiting requests 503 and stops listening. */
  readonly refuse: () => Promise<void>
}

/**
 * Listens first, so that with ISSUING_PORT=0 the default public base URL names the real port.
 * Requests arriving before the platform is ready wait for it.
 */
const listenEarly = async (config: ServerConfig): Promise<EarlyServer> => {
  let ready!: (instance: IssuingInstance | undefined) => void
  const readiness = new Promise<IssuingInstance | undefined>((resolve) => (ready = resolve))
  let handle: http.RequestListener = (request, response) =>
    void readiness.then((instance) => {
      if (instance !== undefined) return instance.listener(request, response)
      response.writeHead(503, { connection: "close" }).end()
    })
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (request, response) => handle(request, response))
  // Requests Node's parser refuses get the envelope too (before start-up completes, on the listen address).
  let baseUrl = () => config.settings.baseUrl
  server.on(
    "clientError",
    clientErrorListener(() => baseUrl())
  )
  // CONNECT never reaches the request listener: it gets the envelope instead of a closed connection.
  server.on(
    "connect",
    connectListener(() => baseUrl())
  )
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(config.port, config.host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  return {
    server,
    url: `http://${host}:${address.port}`,
    open: (instance) => {
      handle = instance.listener
      baseUrl = () => instance.settings.baseUrl
      ready(instance)
    },
    refuse: async () => {
      ready(undefined)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Creates the first organization on an empty database and reports it through `print` once. */
const bootstrapAndReport = async (instance: IssuingInstance, config: ServerConfig, print: (line: string) => void) => {
  const created = await bootstrapOrganization(instance, config.bootstrapApiKey)
  if (created === null) return
  print(`Created organization ${created.organization_id} with program ${created.program_id}`)
  if (config.bootstrapApiKey === undefined) {
    print(`Admin API key (shown once, PAN reveal enabled): ${created.api_key}`)
  } else {
    print("Admin API key: the value of ISSUING_BOOTSTRAP_API_KEY")
  }
  print(`X-Program-ID: ${created.program_id}`)
}

/**
 * The graceful shutdown of a started server, run once however often it is called: stop accepting,
 * let in-flight requests finish (at most SHUTDOWN_GRACE_MS), then stop the background work and close the store.
 */
const gracefulClose = (server: http.Server, instance: IssuingInstance, iso8583: Iso8583Host | undefined) => {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      // The ISO 8583 host's messages in flight finish and are answered before the store closes.
      const isoClosed = iso8583?.close()
      const drained = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      // Keep-alive connections turn idle as their last request finishes: close them as they do.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50)
      const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS)
      await drained
      clearInterval(sweeper)
      clearTimeout(timer)
      await isoClosed
      await instance.dispose()
    })()
    return closing
  }
}

/**
 * `issuing serve`: the API and the background tasks on one port. On an empty database it creates
 * the first organization (with ISSUING_BOOTSTRAP_API_KEY as its admin key's secret when set) and
 * reports it through `print` once. `options.telemetry` switches on traces and metrics (docs/observability.md).
 */
export const startServer = async (
  config: ServerConfig,
  print: (line: string) => void,
  options: { readonly telemetry?: TelemetryLayer | undefined } = {}
): Promise<RunningServer> => {
  const early = await listenEarly(config)
  let instance: IssuingInstance
  try {
    instance = await createIssuing({
      store: storeFor(config.database),
      vaultKeys: resolveVaultKeys(config),
      settings: config.baseUrlFromListenAddress === true ? { ...config.settings, baseUrl: early.url } : config.settings,
      telemetry: options.telemetry,
      log: print,
      clockOffsetMs: config.clockOffsetMs
    })
  } catch (error) {
    await early.refuse()
    throw error
  }
  let iso8583: Iso8583Host | undefined
  try {
    await bootstrapAndReport(instance, config, print)
    if (config.iso8583 !== undefined) {
      iso8583 = await startIso8583Host(instance, { ...config.iso8583, log: print })
      const address = iso8583.host.includes(":") ? `[${iso8583.host}]` : iso8583.host
      print(
        `ISO 8583 host listening on ${address}:${iso8583.port} (${iso8583.tls ? "mutual TLS" : "plain TCP, loopback"}; organization ${iso8583.organizationId})`
      )
    }
  } catch (error) {
    await early.refuse()
    await instance.dispose()
    throw error
  }
  early.open(instance)
  return { url: early.url, instance, iso8583, close: gracefulClose(early.server, instance, iso8583) }
}
