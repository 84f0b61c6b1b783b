import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { connectIso, type IsoConnection, type IsoFields, nextStan, transmissionTime } from "../support/iso8583.js"
import { type Cluster, NODE_ADMIN_SECRET, type Node, startCluster } from "../support/nodes.js"

/**
 * A repeat of an ISO 8583 message across two `issuing serve` processes on one database (docs/iso8583.md
 * #linking-and-repeats): each process keeps its own map of the messages in flight, so a repeat sent
 * to the other node relies on the database's idempotency alone. The same 0100 (same acquirer, STAN
 * and transmission time) sent to both nodes at once, and to one after the other, is one
 * authorization: both answers equal field for field, one hold, one card event. Both stores.
 */
describe.each(STORE_KINDS)("an ISO 8583 repeat across two nodes on %s", (kind) => {
  let database: TestDatabase
  let cluster: Cluster | undefined
  let onA: IsoConnection | undefined
  let onB: IsoConnection | undefined

  const isoPort = (node: Node) => {
    const found = /ISO 8583 host listening on 127\.0\.0\.1:(\d+)/.exec(node.output)
    expect(found, node.output).not.toBeNull()
    return Number(found![1])
  }
  const api = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${cluster!.a.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${NODE_ADMIN_SECRET}`,
        "x-program-id": cluster!.programId,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const json: any = await response.json()
    expect(response.status, JSON.stringify(json)).toBe(200)
    return json
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    cluster = await startCluster(database, { ISSUING_ISO8583_LISTEN: "127.0.0.1:0" })
    const [a, b] = [isoPort(cluster.a), isoPort(cluster.b)]
    expect(a).not.toBe(b)
    onA = await connectIso(a)
    onB = await connectIso(b)
  }, 120_000)
  afterAll(async () => {
    onA?.close()
    onB?.close()
    await cluster?.stop()
    await database?.drop()
  }, 60_000)

  it("answers the same 0100 sent to both nodes, at once or one after the other, once and alike", async () => {
    const wallet = await api("POST", "/v1/wallets", { holder: { name: "Ada Lovelace" } })
    await api("POST", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: 100_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await api("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const data = await api("POST", `/v1/cards/${card.id}/reveal`)
    const authorization = (amount: number): IsoFields => ({
      0: "0100",
      2: data.pan,
      3: "000000",
      4: String(amount).padStart(12, "0"),
      7: transmissionTime(),
      11: nextStan(),
      14: `${String(data.exp_year % 100).padStart(2, "0")}${String(data.exp_month).padStart(2, "0")}`,
      18: "5411",
      32: "412345",
      37: `RRN${nextStan()}123`,
      41: "TERM0001",
      42: "ACQ-000123     ",
      43: `${"Corner Grocery".padEnd(25)}${"Springfield".padEnd(13)}US`,
      49: "840"
    })

    const sent: Array<number> = []
    // At once: the same message to both nodes, three times over (the race is between two processes).
    for (const amount of [1_000, 1_100, 1_200]) {
      const message = authorization(amount)
      const [fromA, fromB] = await Promise.all([onA!.send(message), onB!.send(message)])
      expect(fromA).toMatchObject({ 0: "0110", 39: "00", 4: message["4"], 11: message["11"] })
      expect(fromB).toEqual(fromA)
      sent.push(amount)
    }
    // One after the other: A answers first; B's copy, and an 0101 repeat to B, get A's answer.
    const message = authorization(1_300)
    const first = await onA!.send(message)
    expect(first["39"]).toBe("00")
    expect(await onB!.send(message)).toEqual(first)
    expect(await onB!.send({ ...message, 0: "0101" })).toEqual(first)
    sent.push(1_300)

    // The ledger holds each once: one transaction, one authorization each, the holds summed once.
    const account = await api("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect(account.pending_balance.amount).toBe(sent.reduce((sum, amount) => sum + amount, 0))
    const transactions = (await api("GET", `/v1/transactions?card_id=${card.id}&page_size=100`)).data as Array<any>
    expect(transactions.map((t) => t.amount).sort()).toEqual([...sent].sort())
    for (const transaction of transactions) {
      expect(transaction.card_events.map((event: any) => event.type)).toEqual(["AUTHORIZATION"])
    }
    const holds = (await api("GET", "/v1/events?type=transaction.updated&page_size=100")).data as Array<any>
    expect(holds.filter((event) => event.data.object.card_id === card.id)).toHaveLength(sent.length)
  })
})
