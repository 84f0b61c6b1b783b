import { type Iso8583Host, startIso8583Host } from "@issuing/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { makeCertificates } from "../support/certificates.js"
import { STORE_KINDS } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { connectIso, type IsoConnection, type IsoFields, nextStan, originalData, pack, transmissionTime } from "../support/iso8583.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * The ISO 8583 authorization host (docs/iso8583.md) on both stores, driven by an acquirer that
 * packs and parses its frames with the `iso_8583` npm package: each MTI, every decline code,
 * linking by field 90, repeats of both kinds, pipelining, a bad connection beside a good one,
 * mutual TLS. The host sends the network ingress's own card messages, so what it did is read back
 * through the HTTP API.
 */
describe.each(STORE_KINDS)("ISO 8583 host on %s", (kind) => {
  let platform: TestPlatform
  let host: Iso8583Host
  let receiver: DecisionReceiver
  let acquirer: IsoConnection
  const logged: Array<string> = []

  beforeAll(async () => {
    platform = await startPlatform(kind)
    receiver = await startDecisionReceiver()
    host = await startIso8583Host(platform.instance, {
      host: "127.0.0.1",
      port: 0,
      organizationId: platform.org.organization_id,
      log: (line) => logged.push(line)
    })
    acquirer = await connectIso(host.port)
  })
  afterAll(async () => {
    acquirer?.close()
    await host?.close()
    receiver?.close()
    await platform?.close()
  })

  const ACQUIRER_ID = "412345"
  /** A card of a funded wallet, as a terminal reads it. */
  const setup = async (funds: number, card: Record<string, unknown> = {}) => {
    const wallet = await createWallet(platform)
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    const issued = await issueCard(platform, wallet.id, card)
    const data = await reveal(platform, issued.id)
    return {
      cardId: issued.id as string,
      accountId: wallet.financial_account_id as string,
      pan: data.pan,
      cvv: data.cvv,
      expiry: `${String(data.exp_year % 100).padStart(2, "0")}${String(data.exp_month).padStart(2, "0")}`
    }
  }
  type Card = Awaited<ReturnType<typeof setup>>
  /** A 0100 (or `mti`) for `amount` of `card` at a grocery in Springfield. */
  const request = (card: Pick<Card, "pan"> & Partial<Card>, amount: number, extra: IsoFields = {}): IsoFields => ({
    0: "0100",
    2: card.pan,
    3: "000000",
    4: String(amount).padStart(12, "0"),
    7: transmissionTime(),
    11: nextStan(),
    ...(card.expiry === undefined ? {} : { 14: card.expiry }),
    18: "5411",
    32: ACQUIRER_ID,
    37: "RRN000000001",
    41: "TERM0001",
    42: "ACQ-000123     ",
    43: `${"Corner Grocery".padEnd(25)}${"Springfield".padEnd(13)}US`,
    // The verification code in field 48 subelement 92 (tag, 2-digit length, value).
    ...(card.cvv === undefined ? {} : { 48: `92${String(card.cvv.length).padStart(2, "0")}${card.cvv}` }),
    49: "840",
    ...extra
  })
  /** A message linked by field 90 to `original`, without the card. */
  const linked = (mti: string, original: IsoFields, amount: number, extra: IsoFields = {}): IsoFields => ({
    0: mti,
    3: "000000",
    4: String(amount).padStart(12, "0"),
    7: transmissionTime(),
    11: nextStan(),
    32: ACQUIRER_ID,
    49: "840",
    90: originalData(original),
    ...extra
  })
  const account = async (id: string) => {
    const body = (await platform.request("GET", `/v1/financial-accounts/${id}`)).body
    return { balance: body.balance.amount, pending: body.pending_balance.amount }
  }
  const transactionsOf = async (cardId: string) => (await platform.request("GET", `/v1/transactions?card_id=${cardId}`)).body.data

  it("approves a 0100: 0110 with 39 00, an authorization code in 38, the request's fields echoed, the hold and the merchant", async () => {
    const card = await setup(10_000)
    const sent = request(card, 2_500)
    const answer = await acquirer.send(sent)
    expect(answer).toEqual({
      0: "0110",
      2: sent["2"],
      3: "000000",
      4: "000000002500",
      7: sent["7"],
      11: sent["11"],
      32: ACQUIRER_ID,
      37: "RRN000000001",
      38: expect.stringMatching(/^[0-9A-Z]{6}$/),
      39: "00",
      41: "TERM0001",
      42: "ACQ-000123     ",
      49: "840"
    })
    expect(await account(card.accountId)).toEqual({ balance: 10_000, pending: 2_500 })
    const [held] = await transactionsOf(card.cardId)
    expect(held).toMatchObject({
      status: "PENDING",
      pending_amount: 2_500,
      currency: "USD",
      mcc: "5411",
      merchant: { acceptor_id: "ACQ-000123", name: "Corner Grocery", city: "Springfield", country: "US", mcc: "5411" },
      network_transaction_id: `${ACQUIRER_ID}:${sent["7"]}:${sent["11"]}`
    })
    // The card number and code never reach the host's log.
    expect(logged.join("\n")).not.toContain(card.pan)
  })

  it("answers every decline with its code: 14, 54, N7, 51, 57, 61, 62, 46, 13, 30", async () => {
    const code = async (fields: IsoFields) => (await acquirer.send(fields))["39"]
    const card = await setup(1_000, { blockedMccCodes: ["7995"], spendingPeriod: { interval: "PER_TRANSACTION", amount: 800 } })
    expect(await code(request({ pan: "4000009999999991" }, 100))).toBe("14")
    const wrongYear = `${String((Number(card.expiry.slice(0, 2)) + 1) % 100).padStart(2, "0")}${card.expiry.slice(2)}`
    expect(await code(request({ ...card, expiry: wrongYear }, 100))).toBe("54")
    const wrongCvv = String((Number(card.cvv) + 1) % 1000).padStart(3, "0")
    expect(await code(request({ ...card, cvv: wrongCvv }, 100))).toBe("N7")
    expect(await code(request(card, 900, { 18: "5411" }))).toBe("61")
    expect(await code(request(card, 100, { 18: "7995" }))).toBe("57")
    const poor = await setup(100)
    expect(await code(request(poor, 101))).toBe("51")
    // A currency no ISO 4217 code names, and one that is not the card's: format errors.
    expect(await code(request(poor, 10, { 49: "999" }))).toBe("30")
    expect(await code(request(poor, 10, { 49: "978" }))).toBe("30")
    // Without field 49 the amount is in US dollars, the card's currency here.
    const { 49: _currency, ...dollars } = request(card, 10)
    expect(await acquirer.send(dollars)).toMatchObject({ 39: "00" })
    // A zero amount is an invalid amount.
    expect(await code(request(poor, 0))).toBe("13")
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/freeze`)).status).toBe(200)
    expect(await code(request(poor, 10))).toBe("62")
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/close`)).status).toBe(200)
    expect(await code(request(poor, 10))).toBe("46")
    // Declines hold nothing and have no authorization code.
    const declined = await acquirer.send(request(poor, 10))
    expect(declined["38"]).toBeUndefined()
    expect(await account(poor.accountId)).toEqual({ balance: 100, pending: 0 })
    // A reversal of more than the hold: 13, nothing released (10 of the card is held by the dollars above).
    const held = request(card, 300)
    expect(await code(held)).toBe("00")
    expect(await code(linked("0400", held, 301))).toBe("13")
    expect(await account(card.accountId)).toMatchObject({ pending: 310 })
  })

  it("asks the program: its decline is 05, its partial approval 10 with the approved amount in field 4", async () => {
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/decline"), timeout_ms: 2000 }
    })
    expect(created.status, created.text).toBe(200)
    try {
      const card = await setup(1_000)
      expect((await acquirer.send(request(card, 500)))["39"]).toBe("05")
      await platform.request("PATCH", `/v1/authorization-endpoints/${created.body.id}`, { body: { url: receiver.url("/amount/300") } })
      const partial = await acquirer.send(request(card, 500))
      expect(partial).toMatchObject({ 0: "0110", 4: "000000000300", 39: "10", 38: expect.stringMatching(/^[0-9A-Z]{6}$/) })
      expect(await account(card.accountId)).toMatchObject({ pending: 300 })
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${created.body.id}`)
    }
  })

  it("links by field 90: a 0400 reverses part of the hold, a 0220 completes it, a 0420 of a cleared one moves nothing", async () => {
    const card = await setup(10_000)
    const authorization = request(card, 4_000)
    expect((await acquirer.send(authorization))["39"]).toBe("00")
    const reversal = await acquirer.send(linked("0400", authorization, 1_000))
    expect(reversal).toMatchObject({ 0: "0410", 39: "00", 4: "000000001000" })
    expect(await account(card.accountId)).toEqual({ balance: 10_000, pending: 3_000 })
    const completion = await acquirer.send(linked("0220", authorization, 3_000))
    expect(completion).toMatchObject({ 0: "0230", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 7_000, pending: 0 })
    const late = await acquirer.send(linked("0420", authorization, 500))
    expect(late).toMatchObject({ 0: "0430", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 7_000, pending: 0 })
    const [transaction] = await transactionsOf(card.cardId)
    expect(transaction).toMatchObject({ status: "SETTLED", settled_amount: 3_000 })
    expect(transaction.card_events.map((event: any) => event.type)).toEqual(["AUTHORIZATION", "AUTHORIZATION_REVERSAL", "CLEARING"])
    // A 0200 clears at once; a 0120 advice holds whatever the checks say; a reversal without field 90 is a format error.
    expect(await acquirer.send(request(card, 200, { 0: "0200" }))).toMatchObject({ 0: "0210", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 6_800, pending: 0 })
    expect(await acquirer.send(request(card, 50_000, { 0: "0120" }))).toMatchObject({ 0: "0130", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 6_800, pending: 50_000 })
    const { 90: _, ...unlinked } = linked("0400", authorization, 10)
    expect(await acquirer.send(unlinked)).toMatchObject({ 0: "0410", 39: "30" })
  })

  it("maps an 0100 with field 90 to an increment, a 20 processing code to a refund, an unlinked 0220 to a force post", async () => {
    const card = await setup(10_000)
    const authorization = request(card, 1_000)
    expect((await acquirer.send(authorization))["39"]).toBe("00")
    const increment = await acquirer.send(linked("0100", authorization, 500))
    expect(increment).toMatchObject({ 0: "0110", 39: "00", 38: expect.stringMatching(/^[0-9A-Z]{6}$/) })
    expect(await account(card.accountId)).toEqual({ balance: 10_000, pending: 1_500 })
    // A completion with no authorization seen: posted against the card it names.
    expect(await acquirer.send(request(card, 700, { 0: "0220" }))).toMatchObject({ 0: "0230", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 9_300, pending: 1_500 })
    // A refund of a purchase never seen: settlement → the wallet.
    expect(await acquirer.send(request(card, 200, { 0: "0200", 3: "200000" }))).toMatchObject({ 0: "0210", 39: "00" })
    expect(await account(card.accountId)).toEqual({ balance: 9_500, pending: 1_500 })
    const types = (await transactionsOf(card.cardId)).flatMap((t: any) => t.card_events.map((event: any) => event.type)).sort()
    expect(types).toEqual(["AUTHORIZATION", "CLEARING", "INCREMENTAL_AUTHORIZATION", "RETURN"])
    // The same acquirer, STAN and time with another amount is not a repeat but a mistake: 30, nothing moves.
    expect((await acquirer.send({ ...authorization, 4: "000000000999" }))["39"]).toBe("30")
    expect(await account(card.accountId)).toEqual({ balance: 9_500, pending: 1_500 })
  })

  it("answers a repeat as the first, once: an 0101, the same acquirer, STAN and time again, and both at once", async () => {
    const card = await setup(10_000)
    const first = request(card, 1_000)
    const answer = await acquirer.send(first)
    expect(answer["39"]).toBe("00")
    const repeat = await acquirer.send({ ...first, 0: "0101" })
    expect(repeat).toEqual(answer)
    const again = await acquirer.send(first)
    expect(again).toEqual(answer)
    expect(await account(card.accountId)).toMatchObject({ pending: 1_000 })
    // Sent back to back, before the first is answered: one hold, two equal answers.
    const twice = request(card, 700)
    const [one, two] = await Promise.all([
      acquirer.send(twice),
      connectIso(host.port).then(async (other) => {
        const answered = await other.send({ ...twice, 0: "0101" })
        other.close()
        return answered
      })
    ])
    expect(one).toEqual({ ...two, 0: "0110" })
    expect(await account(card.accountId)).toMatchObject({ pending: 1_700 })
    // A reversal's repeat releases once.
    const reversal = linked("0400", first, 400)
    expect((await acquirer.send(reversal))["39"]).toBe("00")
    expect((await acquirer.send({ ...reversal, 0: "0401" }))["39"]).toBe("00")
    expect(await account(card.accountId)).toMatchObject({ pending: 1_300 })
  })

  it("takes 20 requests pipelined on one connection and matches each answer by STAN and field 7", async () => {
    const card = await setup(100_000)
    const connection = await connectIso(host.port)
    try {
      const requests = Array.from({ length: 20 }, (_, i) => request(card, 100 + i))
      const answers = Promise.all(requests.map((fields) => connection.send(fields)))
      const answered = await answers
      answered.forEach((answer, i) => {
        expect(answer).toMatchObject({ 0: "0110", 11: requests[i]!["11"], 4: requests[i]!["4"], 39: "00" })
      })
      expect(connection.received).toHaveLength(20)
      expect(await account(card.accountId)).toMatchObject({ pending: 20 * 100 + (19 * 20) / 2 })
    } finally {
      connection.close()
    }
  })

  it("never lets a slow program decision hold up other messages of the connection", async () => {
    const card = await setup(10_000)
    const earlier = request(card, 1_000)
    expect((await acquirer.send(earlier))["39"]).toBe("00")
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/late/1500"), timeout_ms: 3000 }
    })
    expect(created.status, created.text).toBe(200)
    try {
      const connection = await connectIso(host.port)
      const slow = connection.send(request(card, 500))
      const echo = connection.send({ 0: "0800", 7: transmissionTime(), 11: nextStan(), 70: "301" })
      const reversal = connection.send(linked("0400", earlier, 100))
      expect((await echo)["39"]).toBe("00")
      expect((await reversal)["39"]).toBe("00")
      expect((await slow)["39"]).toBe("00")
      expect(connection.received.map((answer) => answer["0"])).toEqual(["0810", "0410", "0110"])
      connection.close()
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${created.body.id}`)
    }
  })

  it("loses no applied message when the connection drops mid-message: the repeat after reconnecting answers as the first", async () => {
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/late/600"), timeout_ms: 3000 }
    })
    try {
      const card = await setup(10_000)
      const first = request(card, 900)
      const dropped = await connectIso(host.port)
      dropped.write(pack(first))
      await new Promise((resolve) => setTimeout(resolve, 100))
      dropped.close()
      const again = await connectIso(host.port)
      const answer = await again.send({ ...first, 0: "0101" })
      again.close()
      expect(answer).toMatchObject({ 0: "0110", 39: "00" })
      expect(await account(card.accountId)).toMatchObject({ pending: 900 })
      expect(await transactionsOf(card.cardId)).toHaveLength(1)
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${created.body.id}`)
    }
  })

  it("answers a frame it cannot parse with 30 when its MTI is readable, and closes only a connection that sends garbage", async () => {
    const card = await setup(10_000)
    const bad = await connectIso(host.port)
    // An 0100 whose bitmap names field 2 but whose frame ends inside it.
    const truncated = Buffer.from([0x00, 0x0e, ...Buffer.from("0100"), 0x40, 0, 0, 0, 0, 0, 0, 0, ...Buffer.from("16")])
    bad.write(truncated)
    expect(await bad.next()).toMatchObject({ 0: "0110", 39: "30" })
    // Then bytes that are no message at all: that connection is closed, the other keeps working.
    bad.write(Buffer.from([0x00, 0x05, ...Buffer.from("hello")]))
    const working = acquirer.send(request(card, 100))
    await bad.closed
    expect((await working)["39"]).toBe("00")
    // Text whose first two bytes read as a long length is closed at once, not waited on.
    const text = await connectIso(host.port)
    text.write(Buffer.from("GET / HTTP/1.1\r\n"))
    await text.closed
    expect((await acquirer.send({ 0: "0800", 7: transmissionTime(), 11: nextStan(), 70: "301" }))["39"]).toBe("00")
  })

  it("answers network management: sign-on 001, sign-off 002 and echo 301 with 0810 and 39 00", async () => {
    for (const code of ["001", "301", "002"]) {
      const sent = { 0: "0800", 7: transmissionTime(), 11: nextStan(), 70: code }
      expect(await acquirer.send(sent)).toEqual({ 0: "0810", 7: sent["7"], 11: sent["11"], 39: "00", 70: code })
    }
    expect((await acquirer.send({ 0: "0800", 7: transmissionTime(), 11: nextStan(), 70: "999" }))["39"]).toBe("30")
  })
})

/** The test's certificates, made once for the file (openssl key generation is the slow part). */
let madeCertificates: ReturnType<typeof makeCertificates> | undefined
afterAll(() => madeCertificates?.remove())

describe.each(STORE_KINDS)("ISO 8583 host over mutual TLS on %s", (kind) => {
  let platform: TestPlatform
  let certificates: ReturnType<typeof makeCertificates>
  let host: Iso8583Host

  beforeAll(async () => {
    platform = await startPlatform(kind)
    madeCertificates ??= makeCertificates()
    certificates = madeCertificates
    host = await startIso8583Host(platform.instance, {
      host: "127.0.0.1",
      port: 0,
      organizationId: platform.org.organization_id,
      tls: { cert: certificates.paths.serverCert, key: certificates.paths.serverKey, ca: certificates.ca },
      log: null
    })
  })
  afterAll(async () => {
    await host?.close()
    await platform?.close()
  })

  const echo = { 0: "0800", 7: "1129120000", 11: "000001", 70: "301" }

  it("answers a gateway whose certificate the CA signed, and refuses a stranger's and a connection without one", async () => {
    const gateway = await connectIso(host.port, { tls: { ...certificates.gateway, ca: certificates.ca, servername: "localhost" } })
    expect((await gateway.send(echo))["39"]).toBe("00")
    gateway.close()
    const refused = async (client: { cert?: string; key?: string }) => {
      const connection = await connectIso(host.port, { tls: { ...client, ca: certificates.ca, servername: "localhost" } }).catch(() => null)
      if (connection === null) return true
      const answered = await Promise.race([
        connection.send(echo).then(
          () => true,
          () => false
        ),
        connection.closed.then(() => false)
      ])
      connection.close()
      return !answered
    }
    expect(await refused(certificates.stranger)).toBe(true)
    expect(await refused({})).toBe(true)
  })

  it("refuses to start off loopback without TLS", async () => {
    await expect(startIso8583Host(platform.instance, { host: "0.0.0.0", port: 0, log: null })).rejects.toThrow(/off loopback.*mutual TLS/)
  })
})
