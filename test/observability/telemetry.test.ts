import { runDeliveryWorker } from "@issuing/core"
import {
  createIssuing,
  type IssuingInstance,
  sampleDeliveryQueue,
  startIso8583Host,
  storeFor,
  telemetryFromEnv,
  telemetryLayer,
  withDeliveryTelemetry
} from "@issuing/http"
import { type DataPoint, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Fiber } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { connectIso, nextStan, transmissionTime } from "../support/iso8583.js"
import { TEST_VAULT_KEY } from "../support/platform.js"
import { startReceiver } from "../webhooks/receiver.js"

/** A metric reader the test collects from on demand. */
class TestMetricReader extends MetricReader {
  protected override onShutdown = () => Promise.resolve()
  protected override onForceFlush = () => Promise.resolve()
}

describe("telemetry is off by default and switched on by the standard variables", () => {
  it("telemetryFromEnv", () => {
    expect(telemetryFromEnv({})).toBeUndefined()
    expect(telemetryFromEnv({ OTEL_SERVICE_NAME: "x" })).toBeUndefined()
    expect(telemetryFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined()
    expect(
      telemetryFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none"
      })
    ).toBeUndefined()
    expect(telemetryFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBeDefined()
    expect(telemetryFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBeDefined()
  })

  it("makes no span without a telemetry layer; a host's own effect turns tracing on with Effect.withTracerEnabled(true)", async () => {
    const instance = await createIssuing({
      store: storeFor({ kind: "sqlite", filename: ":memory:" }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: null
    })
    try {
      const spanId = Effect.withSpan(
        Effect.map(Effect.currentSpan, (span) => span.spanId),
        "host.work"
      )
      // Effect's no-op span: nothing built, nothing recorded.
      expect(await instance.runtime.runPromise(spanId)).toBe("noop")
      expect(await instance.runtime.runPromise(Effect.withTracerEnabled(spanId, true))).not.toBe("noop")
    } finally {
      await instance.dispose()
    }
  })
})

describe.each(STORE_KINDS)("OpenTelemetry spans and metrics on %s", (kind) => {
  const exporter = new InMemorySpanExporter()
  const reader = new TestMetricReader()
  let database: TestDatabase
  let instance: IssuingInstance
  let server: http.Server
  let baseUrl: string

  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    server = http.createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    instance = await createIssuing({
      store: storeFor(kind === "sqlite" ? { kind: "sqlite", filename: database.filename! } : { kind: "postgres", url: database.url }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: null,
      settings: { baseUrl },
      telemetry: telemetryLayer({
        resource: { serviceName: "issuing-test" },
        spanProcessor: new SimpleSpanProcessor(exporter),
        metricReader: reader
      })
    })
    server.on("request", instance.listener)
  })

  afterAll(async () => {
    server?.closeAllConnections()
    await new Promise<void>((resolve) => server?.close(() => resolve()))
    await instance?.dispose()
    await database?.drop()
  })

  it("a span per request, SQL statement and delivery attempt with their attributes, the metrics, and no card data or secret anywhere", async () => {
    const org = await instance.runtime.runPromise(
      Effect.flatMap(
        Effect.promise(() => import("@issuing/core")),
        ({ Access }) => Effect.flatMap(Access, (access) => access.createOrganization("Traced"))
      )
    )
    const requestIds: Array<{ route: string; id: string }> = []
    const call = async (method: string, path: string, route: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${org.api_key}`,
          "x-program-id": org.program_id,
          ...(body !== undefined ? { "content-type": "application/json" } : {})
        },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      requestIds.push({ route, id: response.headers.get("request-id")! })
      const text = await response.text()
      expect(response.status, text).toBeLessThan(400)
      return text.startsWith("{") ? JSON.parse(text) : text
    }

    // Metrics are the process's: counted from here (the other store's run came first).
    const transfersSum = (metrics: Map<string, Array<DataPoint<any>>>) =>
      (metrics.get("issuing.transfers") ?? []).reduce((sum, point) => sum + Number(point.value), 0)
    const transfersBefore = transfersSum(metricsByName((await reader.collect()).resourceMetrics))
    const receiver = await startReceiver()
    const subscription = await call("POST", "/v1/webhook-subscriptions", "/v1/webhook-subscriptions", {
      url: receiver.url,
      event_types: ["wallet.created"]
    })
    const wallet = await call("POST", "/v1/wallets", "/v1/wallets", { holder: { name: "Ada Lovelace" } })
    await call("POST", "/v1/transfers", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: 2_500,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const other = await call("POST", "/v1/wallets", "/v1/wallets", { holder: { name: "Grace Hopper" } })
    // Two items post, the malformed one does not: the transfers counter counts two.
    const move = { paymentRail: "book", amount: 100, currency: "USD", from_financial_account_id: wallet.financial_account_id }
    const batch = await call("POST", "/v1/transfers/batch", "/v1/transfers/batch", {
      transfers: [
        { ...move, to_financial_account_id: other.financial_account_id },
        { ...move, amount: "lots", to_financial_account_id: other.financial_account_id },
        { ...move, to_financial_account_id: other.financial_account_id }
      ]
    })
    expect(batch.data.map((item: { object?: string }) => item.object ?? "error")).toEqual(["transfer", "error", "transfer"])
    const card = await call("POST", "/v1/cards", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const revealed = await call("POST", `/v1/cards/${card.id}/reveal`, "/v1/cards/:card_id/reveal")
    await call("POST", "/v1/cards/search-by-pan", "/v1/cards/search-by-pan", { pan: revealed.pan })
    const session = await call("POST", `/v1/cards/${card.id}/embed-sessions`, "/v1/cards/:card_id/embed-sessions")
    const token = new URL(session.embed_url).searchParams.get("session_token")!
    await call("GET", `/v1/cards/embed?session_token=${token}`, "/v1/cards/embed")

    // The worker delivers wallet.created with a span per attempt; the queue gauges are sampled.
    const worker = instance.runtime.runFork(withDeliveryTelemetry(runDeliveryWorker()) as Effect.Effect<void, unknown, never>)
    await receiver.waitFor((received) => received.length > 0, 20_000)
    await instance.runtime.runPromise(Fiber.interrupt(worker))
    await receiver.close()
    await instance.runtime.runPromise(sampleDeliveryQueue as Effect.Effect<unknown, unknown, never>)

    const spans = exporter.getFinishedSpans()
    // One server span per request, named by route template, with status, request id and program.
    for (const { id, route } of requestIds) {
      const span = spans.find((candidate) => candidate.attributes["issuing.request_id"] === id)
      expect(span, `span of ${route}`).toBeDefined()
      expect(span!.attributes["http.route"]).toBe(route)
      expect(span!.name).toBe(`${span!.attributes["http.request.method"]} ${route}`)
      expect(span!.attributes["http.response.status_code"]).toBe(200)
      expect(span!.attributes["issuing.program_id"]).toBe(org.program_id)
    }
    // SQL statements as child spans of the requests' traces.
    const requestTraces = new Set(
      spans.filter((span) => span.attributes["http.route"] !== undefined).map((span) => span.spanContext().traceId)
    )
    const sqlSpans = spans.filter((span) => typeof span.attributes["db.query.text"] === "string")
    expect(sqlSpans.length).toBeGreaterThan(requestIds.length)
    expect(sqlSpans.some((span) => requestTraces.has(span.spanContext().traceId))).toBe(true)
    // The delivery attempt.
    const attempt = spans.find((span) => span.name === "webhook.delivery_attempt")
    expect(attempt).toBeDefined()
    expect(attempt!.attributes).toMatchObject({ "http.response.status_code": 200, "issuing.webhook.outcome": "SUCCESS" })
    expect(attempt!.attributes["server.address"]).toBe(new URL(receiver.url).host)

    const { resourceMetrics } = await reader.collect()
    const metrics = metricsByName(resourceMetrics)
    expect([...metrics.keys()]).toEqual(
      expect.arrayContaining([
        "issuing.http.requests",
        "issuing.http.request.duration_ms",
        "issuing.transfers",
        "issuing.webhook.deliveries",
        "issuing.webhook.queue_depth",
        "issuing.webhook.delivery_lag_seconds"
      ])
    )
    expect(transfersSum(metrics) - transfersBefore).toBe(3)
    const revealCount = metrics
      .get("issuing.http.requests")!
      .find((point) => point.attributes["http.route"] === "/v1/cards/:card_id/reveal")
    expect(revealCount?.value).toBeGreaterThanOrEqual(1)
    expect(metrics.get("issuing.webhook.deliveries")!.some((point) => point.attributes.outcome === "success")).toBe(true)

    // Nothing secret in any attribute, event, resource or metric label.
    const everything = JSON.stringify({
      spans: spans.map((span: ReadableSpan) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
        resource: span.resource.attributes
      })),
      metrics: [...metrics.entries()].map(([name, points]) => ({ name, labels: points.map((point) => point.attributes) }))
    })
    for (const secret of [revealed.pan, org.api_key, token, subscription.secret]) {
      expect(secret.length).toBeGreaterThan(8)
      expect(everything).not.toContain(secret)
    }
    // The code is three or four digits, so it is looked for as a value, not as any substring.
    const values = spans.flatMap((span) => [
      ...Object.values(span.attributes),
      ...span.events.flatMap((event) => Object.values(event.attributes ?? {}))
    ])
    expect(values.map(String)).not.toContain(revealed.cvv)
    expect(everything).not.toMatch(new RegExp(`cvv[^,}]*${revealed.cvv}`))
  })

  it("the ISO 8583 host's connections, messages by MTI and response code, and their latencies, with no card number", async () => {
    const org = await instance.runtime.runPromise(
      Effect.flatMap(
        Effect.promise(() => import("@issuing/core")),
        ({ Access }) => Effect.flatMap(Access, (access) => access.createOrganization("ISO traced"))
      )
    )
    const host = await startIso8583Host(instance, { host: "127.0.0.1", port: 0, organizationId: org.organization_id, log: null })
    const pan = "4000009999999991"
    try {
      const acquirer = await connectIso(host.port)
      const common = { 7: transmissionTime(), 32: "4321", 49: "840", 3: "000000", 4: "000000000100" }
      expect((await acquirer.send({ 0: "0800", 7: transmissionTime(), 11: nextStan(), 70: "301" }))["39"]).toBe("00")
      expect((await acquirer.send({ 0: "0100", 2: pan, 11: nextStan(), ...common }))["39"]).toBe("14")
      acquirer.close()
      await acquirer.closed
    } finally {
      await host.close()
    }
    const metrics = metricsByName((await reader.collect()).resourceMetrics)
    const answered = metrics.get("issuing.iso8583.messages") ?? []
    expect(answered).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ attributes: { mti: "0800", response_code: "00" } }),
        expect.objectContaining({ attributes: { mti: "0100", response_code: "14" } })
      ])
    )
    expect((metrics.get("issuing.iso8583.message.duration_ms") ?? []).map((point) => point.attributes.mti)).toEqual(
      expect.arrayContaining(["0800", "0100"])
    )
    expect(Number(metrics.get("issuing.iso8583.connections.accepted")?.[0]?.value)).toBeGreaterThanOrEqual(1)
    expect(metrics.has("issuing.iso8583.connections")).toBe(true)
    expect(JSON.stringify([...metrics.entries()].map(([name, points]) => [name, points.map((point) => point.attributes)]))).not.toContain(
      pan
    )
  })
})

const metricsByName = (resourceMetrics: ResourceMetrics) => {
  const byName = new Map<string, Array<DataPoint<any>>>()
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics)
      byName.set(metric.descriptor.name, [...(byName.get(metric.descriptor.name) ?? []), ...metric.dataPoints])
  }
  return byName
}
