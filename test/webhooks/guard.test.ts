import { checkWebhookUrl, isForbiddenAddress, makeSender, parseRetryAfterMs, retryDelayMs } from "@issuing/core"
import { loadConfig } from "@issuing/http"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

describe("SSRF guard decisions", () => {
  it("refuses loopback, private, link-local, CGNAT, unspecified and metadata addresses", () => {
    for (const address of [
      "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
      "169.254.0.1", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1",
      "fd00:ec2::254", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1", "[::1]", "not-an-ip"
    ]) expect(isForbiddenAddress(address), address).toBe(true)
    for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isForbiddenAddress(address), address).toBe(false)
    }
  })

  it("unpacks IPv6 forms that embed an IPv4 address and judges them by that address", () => {
    // Decisions only: nothing is sent anywhere.
    for (const address of [
      // IPv4-compatible (::/96, deprecated), dotted and hex
      "::127.0.0.1", "::7f00:1", "::10.0.0.1", "::a00:1", "::169.254.169.254", "::192.168.0.1", "[::127.0.0.1]",
      // IPv4-mapped (::ffff:0:0/96), dotted, hex and fully written
      "::ffff:10.0.0.1", "::ffff:7f00:1", "::FFFF:7F00:1", "0:0:0:0:0:ffff:7f00:1", "::ffff:a9fe:a9fe", "::ffff:172.16.0.1",
      // IPv4-translated (::ffff:0:0:0/96)
      "::ffff:0:127.0.0.1", "::ffff:0:a00:1",
      // NAT64 well-known prefix with a private address, dotted and hex; local-use NAT64 prefix
      "64:ff9b::10.0.0.1", "64:ff9b::a00:1", "64:ff9b::127.0.0.1", "64:ff9b::192.168.1.1", "64:ff9b::a9fe:a9fe",
      "64:ff9b:1::a00:1", "64:ff9b:1:2::8.8.8.8",
      // 6to4 of a private address
      "2002:7f00:1::1", "2002:c0a8:101::1"
    ]) expect(isForbiddenAddress(address), address).toBe(true)
    for (const address of [
      "::8.8.8.8", "::808:808", "::ffff:808:808", "::ffff:0:8.8.8.8", "64:ff9b::8.8.8.8", "64:ff9b::808:808",
      "2002:808:808::1", "::ffff:1.1.1.1"
    ]) expect(isForbiddenAddress(address), address).toBe(false)
  })

  it("refuses URLs whose host is an IPv6 literal embedding a private IPv4 address", async () => {
    // The URL parser rewrites these (e.g. [::ffff:127.0.0.1] to [::ffff:7f00:1]); the decision holds.
    for (const url of ["http://[::127.0.0.1]/x", "http://[::ffff:127.0.0.1]/x", "http://[::ffff:7f00:1]/x", "http://[64:ff9b::10.0.0.1]/x", "http://[::ffff:0:10.0.0.1]/x"]) {
      expect(await checkWebhookUrl(new URL(url), false), url).toMatch(/loopback, private/)
    }
  })

  it("checks literal and resolved hosts when private targets are refused, and nothing when allowed", async () => {
    expect(await checkWebhookUrl(new URL("http://127.0.0.1:9/x"), false)).toMatch(/loopback/)
    expect(await checkWebhookUrl(new URL("http://[::1]:9/x"), false)).toMatch(/loopback/)
    expect(await checkWebhookUrl(new URL("http://localhost:9/x"), false)).toMatch(/resolves to/)
    expect(await checkWebhookUrl(new URL("http://169.254.169.254/latest"), false)).toBeDefined()
    expect(await checkWebhookUrl(new URL("http://127.0.0.1:9/x"), true)).toBeUndefined()
  })

  it("bounds retry delays with ±20% jitter and honours Retry-After within [1 s, 1 h]", () => {
    expect(retryDelayMs([1000, 2000], 1, undefined, () => 0)).toBe(800)
    expect(retryDelayMs([1000, 2000], 2, undefined, () => 1)).toBe(2400)
    expect(retryDelayMs([1000, 2000], 3, undefined)).toBeUndefined()
    expect(retryDelayMs([1000], 1, 30_000)).toBe(30_000)
    expect(retryDelayMs([1000], 1, 10)).toBe(1000)
    expect(retryDelayMs([1000], 1, 10 * 3_600_000)).toBe(3_600_000)
    expect(parseRetryAfterMs("7", 0)).toBe(7000)
    expect(parseRetryAfterMs(new Date(60_000).toUTCString(), 0)).toBe(60_000)
    expect(parseRetryAfterMs("soon", 0)).toBeUndefined()
  })
})

describe("webhook configuration", () => {
  it("reads the webhook variables and names the variable on a bad value", () => {
    const ok = loadConfig({ ISSUING_WEBHOOK_DISABLE_AFTER: "12h", ISSUING_WEBHOOK_RETRY_SCHEDULE: "1s,2m", ISSUING_WEBHOOK_CONCURRENCY: "16" })
    expect(Either.isRight(ok)).toBe(true)
    const settings = Either.getOrThrow(ok).settings
    expect(settings).toMatchObject({ webhookDisableAfterMs: 12 * 3_600_000, webhookRetryScheduleMs: [1000, 120_000], webhookConcurrency: 16 })
    expect(Either.getOrThrow(loadConfig({})).settings.webhookDisableAfterMs).toBe(5 * 86_400_000)
    expect(Either.getOrThrow(loadConfig({ ISSUING_ENVIRONMENT: "production", ISSUING_VAULT_KEY: Buffer.alloc(32, 1).toString("base64") })).settings.webhookAllowPrivateUrls).toBe(false)
    for (const [name, value] of [["ISSUING_WEBHOOK_DISABLE_AFTER", "soon"], ["ISSUING_WEBHOOK_CONCURRENCY", "0"], ["ISSUING_WEBHOOK_MAX_RESPONSE_BODY_BYTES", "-1"]] as const) {
      const bad = loadConfig({ [name]: value })
      expect(Either.isLeft(bad)).toBe(true)
      if (Either.isLeft(bad)) expect(bad.left).toContain(name)
    }
  })
})

describe("SSRF guard in production settings", () => {
  let platform: TestPlatform
  let receiver: Receiver
  beforeAll(async () => {
    platform = await startPlatform("sqlite", { webhookAllowPrivateUrls: false, webhookTimeoutMs: 2000 })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await platform?.close()
  })

  it("refuses private targets at create and update time with 400 param url", async () => {
    for (const url of [receiver.url, "http://localhost:1/x", "http://[::1]/x", "http://169.254.169.254/latest/meta-data", "http://10.1.2.3/h"]) {
      const response = await platform.request("POST", "/v1/webhook-subscriptions", { body: { url, event_types: ["wallet.created"] } })
      expectEnvelope(response, 400, { code: "invalid_request", param: "url" })
    }
  })

  it("refuses at connect time a host that resolves to loopback, and never sends to it", async () => {
    const sender = makeSender({ timeoutMs: 2000, allowPrivate: false, maxResponseBodyBytes: 100 })
    try {
      const byName = await Effect.runPromise(sender.send({ url: `http://localhost:${receiver.port}/x`, messageId: "m", body: "{}", keys: [Buffer.alloc(32)] }))
      expect(byName).toMatchObject({ status: "FAILED", responseCode: 0 })
      expect(byName.responseBody).toMatch(/refused/i)
      const literal = await Effect.runPromise(sender.send({ url: receiver.url, messageId: "m", body: "{}", keys: [Buffer.alloc(32)] }))
      expect(literal).toMatchObject({ status: "FAILED", responseCode: 0 })
      expect(receiver.received).toHaveLength(0)
    } finally {
      sender.close()
    }
    // The same sender with private targets allowed does reach it (so the refusal above is the guard).
    const open = makeSender({ timeoutMs: 2000, allowPrivate: true, maxResponseBodyBytes: 100 })
    try {
      const reached = await Effect.runPromise(open.send({ url: `http://localhost:${receiver.port}/x`, messageId: "m", body: "{}", keys: [Buffer.alloc(32)] }))
      expect(reached).toMatchObject({ status: "SUCCESS", responseCode: 200 })
    } finally {
      open.close()
    }
  })
})
