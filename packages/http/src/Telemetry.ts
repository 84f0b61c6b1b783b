import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import type { Resource } from "@effect/opentelemetry/Resource"
import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { type DeliveryOutcome, type OutgoingDelivery, toInt, toIso, WebhookSender } from "@issuing/core"
import { Duration, Effect, type Layer, Metric, MetricBoundaries, Runtime, Schedule } from "effect"
import { IssuingApi } from "./Api.js"
import { makeRouteTable, type RouteTable } from "./middleware/RouteTable.js"

/**
 * A telemetry layer for `createIssuing({ telemetry })`: `telemetryLayer(...)` with the host app's
 * span processors and metric readers, or `telemetryFromEnv(process.env)` (what `issuing serve` uses).
 */
export type TelemetryLayer = Layer.Layer<Resource, unknown>

/** The OpenTelemetry SDK set up by @effect/opentelemetry (tracer, metric producer, resource) with the given processors and readers. */
export const telemetryLayer = (configuration: NodeSdk.Configuration): TelemetryLayer => NodeSdk.layer(() => configuration)

const isSet = (value: string | undefined) => value !== undefined && value.trim() !== ""

/** `OTEL_RESOURCE_ATTRIBUTES` (`key=value,key=value`) as attributes. */
const resourceAttributes = (text: string | undefined): Record<string, string> => {
  const attributes: Record<string, string> = {}
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at > 0) attributes[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return attributes
}

/**
 * Telemetry switched on by the standard OpenTelemetry variables, or undefined (off, the default):
 * on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_` / `_METRICS_` form) is set and
 * `OTEL_SDK_DISABLED` is not `true`. Traces and metrics go to OTLP over HTTP; the exporters read
 * the endpoint, headers, timeout and protocol variables themselves. `OTEL_TRACES_EXPORTER=none` or
 * `OTEL_METRICS_EXPORTER=none` leave one out; `OTEL_SERVICE_NAME` (default `issuing`),
 * `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_METRIC_EXPORT_INTERVAL` (ms, default 60 000) apply.
 */
export const telemetryFromEnv = (env: Readonly<Record<string, string | undefined>>): TelemetryLayer | undefined => {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined
  const traces =
    (isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) && env.OTEL_TRACES_EXPORTER?.trim() !== "none"
  const metrics =
    (isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)) &&
    env.OTEL_METRICS_EXPORTER?.trim() !== "none"
  if (!traces && !metrics) return undefined
  const intervalMs = Number(env.OTEL_METRIC_EXPORT_INTERVAL)
  return telemetryLayer({
    resource: { serviceName: env.OTEL_SERVICE_NAME?.trim() || "issuing", attributes: resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES) },
    ...(traces ? { spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()) } : {}),
    ...(metrics
      ? {
          metricReader: new PeriodicExportingMetricReader({
            exporter: new OTLPMetricExporter(),
            exportIntervalMillis: Number.isInteger(intervalMs) && intervalMs > 0 ? intervalMs : 60_000
          })
        }
      : {})
  })
}

// Metrics (Effect metrics, exported by the SDK's metric reader). Labels are bounded sets: methods,
// route templates, status codes, outcomes.
const requests = Metric.counter("issuing.http.requests", { description: "HTTP requests answered", incremental: true })
const requestDuration = Metric.histogram(
  "issuing.http.request.duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "Time to answer an HTTP request, in milliseconds"
)
const transfers = Metric.counter("issuing.transfers", { description: "Transfers posted through the API", incremental: true })
const deliveries = Metric.counter("issuing.webhook.deliveries", { description: "Webhook delivery attempts by outcome", incremental: true })
const deliveryDuration = Metric.histogram(
  "issuing.webhook.delivery.duration_ms",
  MetricBoundaries.exponential({ start: 5, factor: 2, count: 14 }),
  "Time of one webhook delivery attempt, in milliseconds"
)
const queueDepth = Metric.gauge("issuing.webhook.queue_depth", { description: "Webhook deliveries due now and not yet delivered" })
const deliveryLag = Metric.gauge("issuing.webhook.delivery_lag_seconds", {
  description: "How long the oldest due webhook delivery has been waiting, in seconds"
})

/** Counts transfers the API posted (the transfer and batch handlers call it; a replayed answer posts nothing). */
export const countPostedTransfers = (count: number): Effect.Effect<void> => (count > 0 ? Metric.incrementBy(transfers, count) : Effect.void)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Wraps the platform's app in one server span per request and the request metrics. Attributes:
 * method, route template, status, request id, program id — never the URL, its query (an embed
 * session token travels there), headers or bodies.
 */
export const traceRequests = (app: HttpApp.Default, routes: RouteTable = makeRouteTable(IssuingApi)): HttpApp.Default =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const method = request.method.toUpperCase()
    const matched = routes.match(method, new URL(request.url, "http://localhost").pathname)
    // A span names the route's template, never the path with its ids.
    const route = matched._tag === "Matched" ? matched.template : "unmatched"
    const program = request.headers["x-program-id"]
    const startedMs = performance.now()
    return app.pipe(
      Effect.tap((response) => {
        const status = String(response.status)
        return Effect.all(
          [
            Effect.annotateCurrentSpan({
              "http.response.status_code": response.status,
              "issuing.request_id": response.headers["request-id"] ?? "",
              ...(program !== undefined && UUID.test(program) ? { "issuing.program_id": program.toLowerCase() } : {})
            }),
            Metric.update(
              requests.pipe(
                Metric.tagged("http.request.method", method),
                Metric.tagged("http.route", route),
                Metric.tagged("http.response.status_code", status)
              ),
              1
            ),
            Metric.update(requestDuration.pipe(Metric.tagged("http.route", route)), performance.now() - startedMs)
          ],
          { discard: true }
        )
      }),
      Effect.withSpan(`${method} ${route}`, {
        kind: "server",
        captureStackTrace: false,
        attributes: { "http.request.method": method, "http.route": route }
      })
    )
  })

/** The host of a webhook URL (never its path or query, which may carry the receiver's own token). */
const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return "invalid"
  }
}

/**
 * Runs the webhook delivery worker with a span and metrics per delivery attempt: the worker sends
 * through the WebhookSender port, which this decorates (event id, receiver host, status, outcome —
 * never the body, signature or secret).
 */
export const withDeliveryTelemetry = <A, E, R>(worker: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | WebhookSender> =>
  Effect.gen(function* () {
    const sender = yield* WebhookSender
    const runtime = yield* Effect.runtime<never>()
    const attempt = (delivery: OutgoingDelivery, send: Effect.Effect<DeliveryOutcome>) => {
      const startedMs = performance.now()
      return send.pipe(
        Effect.tap((outcome) =>
          Effect.all(
            [
              Effect.annotateCurrentSpan({
                "http.response.status_code": outcome.responseCode,
                "issuing.webhook.outcome": outcome.status
              }),
              Metric.update(deliveries.pipe(Metric.tagged("outcome", outcome.status === "SUCCESS" ? "success" : "failure")), 1),
              Metric.update(deliveryDuration, performance.now() - startedMs)
            ],
            { discard: true }
          )
        ),
        Effect.withSpan("webhook.delivery_attempt", {
          kind: "client",
          captureStackTrace: false,
          attributes: { "issuing.event_id": delivery.messageId, "server.address": hostOf(delivery.url) }
        })
      )
    }
    const traced = {
      send: (delivery: OutgoingDelivery) => attempt(delivery, sender.send(delivery)),
      sendAsync: (delivery: OutgoingDelivery) =>
        Runtime.runPromise(runtime)(
          attempt(
            delivery,
            Effect.promise(() => sender.sendAsync(delivery))
          )
        )
    }
    return yield* Effect.provideService(worker, WebhookSender, traced)
  })

/** Samples the delivery queue once: how many deliveries are due now and how long the oldest has waited. */
export const sampleDeliveryQueue = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const now = new Date()
  const rows = yield* sql<{ depth: unknown; oldest: unknown }>`
    SELECT count(*) AS depth, min(next_attempt_at) AS oldest
    FROM issuing_webhook_deliveries WHERE next_attempt_at <= ${now.toISOString()}`
  const depth = toInt(rows[0]?.depth ?? 0)
  const oldest = rows[0]?.oldest
  const lagSeconds = oldest === null || oldest === undefined ? 0 : Math.max(0, (now.getTime() - Date.parse(toIso(oldest))) / 1000)
  yield* Metric.set(queueDepth, depth)
  yield* Metric.set(deliveryLag, lagSeconds)
  return { depth, lagSeconds }
})

/** How often the queue gauges are sampled. */
export const QUEUE_SAMPLE_INTERVAL = Duration.seconds(10)

/** Samples the delivery queue gauges every QUEUE_SAMPLE_INTERVAL for as long as it runs (serve, worker). */
export const deliveryQueueMetrics = sampleDeliveryQueue.pipe(
  Effect.catchAllCause((cause) => Effect.logWarning("Delivery queue sample failed", cause)),
  Effect.repeat(Schedule.spaced(QUEUE_SAMPLE_INTERVAL)),
  Effect.asVoid
)
