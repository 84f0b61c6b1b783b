import { checkWebhookUrl, isForbiddenAddress, makeSender, parseRetryAfterMs, retryDelayMs, urlPolicy } from "@issuing/core"
import { loadConfig } from "@issuing/http"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

describe("SSRF guard decisions", () => {
  it("refuses loopback, private, link-local, CGNAT, unspecified and metadata addresses", () => {
    for (const address of [
      "127.0.0.1",
      "127.255.0.9",
      "10.0.0.1",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "169.254.0.1",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd00:ec2::254",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "64:ff9b::a00:1",
      "2002:a00:1::1",
      "[::1]",
      "not-an-ip"
    ])
      expect(isForbiddenAddress(address), address).toBe(true)
    for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isForbiddenAddress(address), address).toBe(false)
    }
  })

  it("unpacks IPv6 forms that embed an IPv4 address and judges them by that address", () => {
    // Decisions only: nothing is sent anywhere.
    for (const address of [
      // IPv4-compatible (::/96, deprecated), dotted and hex
      "::127.0.0.1",
      "::7f00:1",
      "::10.0.0.1",
      "::a00:1",
      "::169.254.169.254",
      "::192.168.0.1",
      "[::127.0.0.1]",
      // IPv4-mapped (::ffff:0:0/96), dotted, hex and fully written
      "::ffff:10.0.0.1",
      "::ffff:7f00:1",
      "::FFFF:7F00:1",
      "0:0:0:0:0:ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "::ffff:172.16.0.1",
      // IPv4-translated (::ffff:0:0:0/96)
      "::ffff:0:127.0.0.1",
      "::ffff:0:a00:1",
      // NAT64 well-known prefix with a private address, dotted and hex; local-use NAT64 prefix
      "64:ff9b::10.0.0.1",
      "64:ff9b::a00:1",
      "64:ff9b::127.0.0.1",
      "64:ff9b::192.168.1.1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b:1::a00:1",
      "64:ff9b:1:2::8.8.8.8",
      // 6to4 of a private address
      "2002:7f00:1::1",
      "2002:c0a8:101::1"
    ])
      expect(isForbiddenAddress(address), address).toBe(true)
    for (const address of [
      "::8.8.8.8",
      "::808:808",
      "::ffff:808:808",
      "::ffff:0:8.8.8.8",
      "64:ff9b::8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
      "::ffff:1.1.1.1"
    ])
      expect(isForbiddenAddress(address), address).toBe(false)
  })

  it("refuses URLs whose host is an IPv6 literal embedding a private IPv4 address", async () => {
    // The URL parser rewrites these (e.g. [::ffff:127.0.0.1] to [::ffff:7f00:1]); the decision holds.
    for (const url of [
      "http://[::127.0.0.1]/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://[::ffff:7f00:1]/x",
      "http://[64:ff9b::10.0.0.1]/x",
      "http://[::ffff:0:10.0.0.1]/x"
    ]) {
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

  it("refuses metadata, site-local and Teredo addresses in every environment, private ones only when refused", () => {
    const always = [
      "169.254.169.254",
      "169.254.170.2",
      "169.254.0.1",
      "100.100.100.200",
      "fd00:ec2::254",
      "fd00:ec2::23",
      "fec0::1",
      "feff:ffff::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001::1",
      "::ffff:169.254.169.254",
      "::ffff:a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "::ffff:100.100.100.200",
      "[fd00:ec2::254]"
    ]
    for (const address of always) {
      expect(isForbiddenAddress(address, true), `${address} with private allowed`).toBe(true)
      expect(isForbiddenAddress(address), address).toBe(true)
    }
    // Private targets stay reachable where they are allowed (sandbox), and public ones everywhere.
    for (const address of ["127.0.0.1", "10.0.0.1", "192.168.1.1", "100.64.0.1", "::1", "fc00::1", "fd00:ec3::254", "fe80::1"]) {
      expect(isForbiddenAddress(address, true), address).toBe(false)
      expect(isForbiddenAddress(address), address).toBe(true)
    }
    for (const address of ["8.8.8.8", "2001:4860:4860::8888", "2001:1::1", "2606:4700::1111", "169.253.255.255", "169.255.0.1"]) {
      expect(isForbiddenAddress(address, true), address).toBe(false)
      expect(isForbiddenAddress(address), address).toBe(false)
    }
  })

  it("refuses metadata URLs with private targets allowed, by literal and by resolved address", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://[fec0::1]/",
      "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
      "http://[::ffff:169.254.169.254]/"
    ]) {
      expect(await checkWebhookUrl(new URL(url), true), url).toMatch(/metadata/)
      expect(await checkWebhookUrl(new URL(url), { allowPrivate: true, allowedPorts: null }), url).toMatch(/metadata/)
    }
    expect(await checkWebhookUrl(new URL("http://127.0.0.1:9/x"), true)).toBeUndefined()
    expect(await checkWebhookUrl(new URL("http://localhost:9/x"), true)).toBeUndefined()
    // A host that does not resolve: nothing to judge in sandbox, refused where private targets are.
    expect(await checkWebhookUrl(new URL("http://nowhere.invalid/x"), true)).toBeUndefined()
    expect(await checkWebhookUrl(new URL("http://nowhere.invalid/x"), false)).toBe("url host does not resolve")
  })

  it("allows only the configured ports (the scheme's port when the URL names none)", async () => {
    const production = { allowPrivate: false, allowedPorts: [443, 80] }
    for (const url of ["https://8.8.8.8/x", "http://8.8.8.8/x", "https://8.8.8.8:443/x", "http://8.8.8.8:80/x", "http://8.8.8.8:443/x"]) {
      expect(await checkWebhookUrl(new URL(url), production), url).toBeUndefined()
    }
    for (const url of ["https://8.8.8.8:8443/x", "http://8.8.8.8:8080/x", "http://8.8.8.8:22/x", "https://8.8.8.8:1/x"]) {
      expect(await checkWebhookUrl(new URL(url), production), url).toBe(
        "url must use one of the ports 443, 80 (the port of its scheme when it names none)"
      )
    }
    expect(await checkWebhookUrl(new URL("https://8.8.8.8:8443/x"), { allowPrivate: false, allowedPorts: [8443] })).toBeUndefined()
    expect(await checkWebhookUrl(new URL("https://8.8.8.8/x"), { allowPrivate: false, allowedPorts: [8443] })).toMatch(/ports 8443/)
    expect(await checkWebhookUrl(new URL("https://8.8.8.8:8443/x"), { allowPrivate: false, allowedPorts: null })).toBeUndefined()
    expect(await checkWebhookUrl(new URL("https://8.8.8.8:8443/x"), false)).toBeUndefined()
    expect(
      urlPolicy(
        Either.getOrThrow(loadConfig({ ISSUING_ENVIRONMENT: "production", ISSUING_VAULT_KEY: Buffer.alloc(32, 1).toString("base64") }))
          .settings
      )
    ).toEqual(production)
    expect(urlPolicy(Either.getOrThrow(loadConfig({})).settings)).toEqual({ allowPrivate: true, allowedPorts: null })
  })

  it("never repeats the URL's host in a refusal", async () => {
    const digits = "4929123456781234"
    for (const [url, policy] of [
      [`http://${digits}.invalid/x`, false],
      [`http://a${digits}.localhost:9/x`, false],
      [`https://${digits}.invalid:8443/x`, { allowPrivate: false, allowedPorts: [443] }]
    ] as const) {
      const refusal = await checkWebhookUrl(new URL(url), policy)
      expect(refusal, url).toBeDefined()
      expect(refusal, url).not.toContain(digits)
    }
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
    const ok = loadConfig({
      ISSUING_WEBHOOK_DISABLE_AFTER: "12h",
      ISSUING_WEBHOOK_RETRY_SCHEDULE: "1s,2m",
      ISSUING_WEBHOOK_CONCURRENCY: "16"
    })
    expect(Either.isRight(ok)).toBe(true)
    const settings = Either.getOrThrow(ok).settings
    expect(settings).toMatchObject({
      webhookDisableAfterMs: 12 * 3_600_000,
      webhookRetryScheduleMs: [1000, 120_000],
      webhookConcurrency: 16
    })
    expect(Either.getOrThrow(loadConfig({})).settings.webhookDisableAfterMs).toBe(5 * 86_400_000)
    expect(
      Either.getOrThrow(loadConfig({ ISSUING_ENVIRONMENT: "production", ISSUING_VAULT_KEY: Buffer.alloc(32, 1).toString("base64") }))
        .settings.webhookAllowPrivateUrls
    ).toBe(false)
    const production = { ISSUING_ENVIRONMENT: "production", ISSUING_VAULT_KEY: Buffer.alloc(32, 1).toString("base64") }
    expect(Either.getOrThrow(loadConfig(production)).settings.webhookAllowedPorts).toEqual([443, 80])
    expect(Either.getOrThrow(loadConfig({})).settings.webhookAllowedPorts).toBeNull()
    expect(
      Either.getOrThrow(loadConfig({ ...production, ISSUING_WEBHOOK_ALLOWED_PORTS: " 443, 8443,443 " })).settings.webhookAllowedPorts
    ).toEqual([443, 8443])
    expect(Either.getOrThrow(loadConfig({ ...production, ISSUING_WEBHOOK_ALLOWED_PORTS: "any" })).settings.webhookAllowedPorts).toBeNull()
    expect(Either.getOrThrow(loadConfig({ ISSUING_WEBHOOK_ALLOWED_PORTS: "443" })).settings.webhookAllowedPorts).toEqual([443])
    for (const [name, value] of [
      ["ISSUING_WEBHOOK_DISABLE_AFTER", "soon"],
      ["ISSUING_WEBHOOK_CONCURRENCY", "0"],
      ["ISSUING_WEBHOOK_MAX_RESPONSE_BODY_BYTES", "-1"],
      ["ISSUING_WEBHOOK_ALLOWED_PORTS", "443,https"],
      ["ISSUING_WEBHOOK_ALLOWED_PORTS", "0"],
      ["ISSUING_WEBHOOK_ALLOWED_PORTS", "70000"],
      ["ISSUING_WEBHOOK_ALLOWED_PORTS", "443,,80"]
    ] as const) {
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

  it("refuses metadata targets in sandbox too (private targets allowed), naming url and not its value", async () => {
    const sandbox = await startPlatform("sqlite")
    try {
      for (const url of [
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/x",
        "http://[fec0::1]/x"
      ]) {
        const response = await sandbox.request("POST", "/v1/webhook-subscriptions", { body: { url, event_types: ["wallet.created"] } })
        const error = expectEnvelope(response, 400, { code: "invalid_request", param: "url" })
        expect(error.message).not.toContain(new URL(url).hostname)
      }
      const local = await sandbox.request("POST", "/v1/webhook-subscriptions", {
        body: { url: receiver.url, event_types: ["wallet.created"] }
      })
      expect(local.status, local.text).toBe(200)
    } finally {
      await sandbox.close()
    }
  })

  it("refuses private targets at create and update time with 400 param url", async () => {
    for (const url of [
      receiver.url,
      "http://localhost:1/x",
      "http://[::1]/x",
      "http://169.254.169.254/latest/meta-data",
      "http://10.1.2.3/h"
    ]) {
      const response = await platform.request("POST", "/v1/webhook-subscriptions", { body: { url, event_types: ["wallet.created"] } })
      expectEnvelope(response, 400, { code: "invalid_request", param: "url" })
    }
  })

  it("refuses at connect time a host that resolves to loopback, and never sends to it", async () => {
    const sender = makeSender({ timeoutMs: 2000, allowPrivate: false, maxResponseBodyBytes: 100 })
    try {
      const byName = await Effect.runPromise(
        sender.send({ url: `http://localhost:${receiver.port}/x`, messageId: "m", body: "{}", keys: [Buffer.alloc(32)] })
      )
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
      const reached = await Effect.runPromise(
        open.send({ url: `http://localhost:${receiver.port}/x`, messageId: "m", body: "{}", keys: [Buffer.alloc(32)] })
      )
      expect(reached).toMatchObject({ status: "SUCCESS", responseCode: 200 })
    } finally {
      open.close()
    }
  })

  it("ends a try at once when its signal aborts (a worker whose claim could not be renewed)", async () => {
    const sender = makeSender({ timeoutMs: 10_000, allowPrivate: true, maxResponseBodyBytes: 100 })
    receiver.reply = () => ({ status: 200, body: "late", delayMs: 5000 })
    try {
      const controller = new AbortController()
      const before = receiver.received.length
      const outcome = sender.sendAsync({
        url: receiver.url,
        messageId: "m",
        body: "{}",
        keys: [Buffer.alloc(32)],
        signal: controller.signal
      })
      await receiver.waitFor((all) => all.length > before)
      controller.abort("lease lost")
      expect(await outcome).toMatchObject({ status: "FAILED", responseCode: 0, responseBody: "abandoned: lease lost" })
      // Aborted before it starts: no request at all.
      const count = receiver.received.length
      expect(
        await sender.sendAsync({ url: receiver.url, messageId: "m", body: "{}", keys: [Buffer.alloc(32)], signal: controller.signal })
      ).toMatchObject({ status: "FAILED", responseCode: 0, responseBody: "abandoned: lease lost" })
      expect(receiver.received.length).toBe(count)
    } finally {
      receiver.reply = () => ({ status: 200, body: "ok" })
      sender.close()
    }
  })
})
