import { SqlError } from "@effect/sql/SqlError"
import { Effect, Stream } from "effect"
import pg from "pg"

/** The `application_name` of a node's listening connection (operators see it in pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = "issuing-listen"

/** What a listening connection reports: each (re)connect, then each notification's payload. */
export type ListenEvent = { readonly _tag: "Connected" } | { readonly _tag: "Notified"; readonly payload: string }

const CONNECTED: ListenEvent = { _tag: "Connected" }

interface Subscriber {
  readonly channel: string
  readonly single: (event: ListenEvent) => void
  readonly fail: (error: SqlError) => void
}

interface Connection {
  readonly client: pg.Client
  /** Channels LISTENed on so far (each once per connection). */
  readonly listening: Map<string, Promise<unknown>>
  /** Resolves when the connection is up (rejects when it could not be opened). */
  readonly ready: Promise<unknown>
}

/**
 * One dedicated `pg` connection per node, shared by every channel it listens on (the change feed
 * and webhook wake-ups): docs/operations.md#the-change-feed. It is opened by the first subscriber,
 * each channel is LISTENed on when first asked for, and it is closed when the last subscriber
 * leaves. A lost connection fails every subscriber's stream at once; each reconnects by running
 * its stream again, which opens a new connection.
 *
 * Its own `pg` client rather than `PgClient.listen`: that one keeps its listening connection
 * after the server drops it (a restart, a failover, an idle-session timeout) and ignores the
 * error, so notifications stop for good. Here a lost connection fails the streams.
 */
export class PgListener {
  private connection: Connection | undefined
  private readonly subscribers = new Set<Subscriber>()
  /** Subscribers still waiting for the connection or their LISTEN (the connection stays for them). */
  private attaching = 0

  constructor(
    private readonly url: string,
    private readonly applicationName = LISTEN_APPLICATION_NAME
  ) {}

  /**
   * Notifications on `channel`: Connected once LISTEN is in place (so a consumer can catch up on
   * what it missed), then every payload in commit order; fails when the connection is lost.
   */
  stream(channel: string): Stream.Stream<ListenEvent, SqlError> {
    return Stream.asyncPush<ListenEvent, SqlError>((emit) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const subscriber: Subscriber = { channel, single: (event) => emit.single(event), fail: (error) => emit.fail(error) }
          return Effect.as(
            Effect.tryPromise({
              try: () => this.attach(subscriber),
              catch: (cause) => new SqlError({ cause, message: `Failed to LISTEN on ${channel}` })
            }),
            subscriber
          )
        }),
        (subscriber) => Effect.promise(() => this.detach(subscriber)).pipe(Effect.timeoutOption("1 second"))
      )
    )
  }

  /**
   * Runs a short read on the listening connection while it is up (it idles between notifications,
   * so a read there waits for no pool connection); undefined when there is no connection. Fails
   * when the connection fails meanwhile.
   */
  async read(text: string): Promise<ReadonlyArray<Record<string, unknown>> | undefined> {
    const connection = this.connection
    if (connection === undefined) return undefined
    try {
      await connection.ready
    } catch {
      return undefined
    }
    if (this.connection !== connection) return undefined
    return (await connection.client.query(text)).rows
  }

  private async attach(subscriber: Subscriber): Promise<void> {
    const connection = this.connection ?? this.open()
    this.attaching++
    try {
      await connection.ready
      let listened = connection.listening.get(subscriber.channel)
      if (listened === undefined) {
        listened = connection.client.query(`LISTEN ${connection.client.escapeIdentifier(subscriber.channel)}`)
        connection.listening.set(subscriber.channel, listened)
      }
      await listened
    } finally {
      this.attaching--
    }
    // Lost while LISTEN was on its way: the loss already failed the others; this one fails here.
    if (this.connection !== connection) throw new Error("The LISTEN connection was lost")
    this.subscribers.add(subscriber)
    subscriber.single(CONNECTED)
  }

  private open(): Connection {
    const client = new pg.Client({ connectionString: this.url, application_name: this.applicationName })
    const lost = (cause: unknown) => {
      if (this.connection?.client !== client) return
      this.connection = undefined
      const error = new SqlError({ cause, message: "The LISTEN connection was lost" })
      for (const subscriber of this.subscribers) subscriber.fail(error)
      this.subscribers.clear()
      client.removeAllListeners("notification")
      client.end().catch(() => undefined)
    }
    client.on("error", lost)
    client.on("end", () => lost(new Error("connection ended")))
    client.on("notification", (message) => {
      for (const subscriber of this.subscribers)
        if (subscriber.channel === message.channel) subscriber.single({ _tag: "Notified", payload: message.payload ?? "" })
    })
    const connection: Connection = {
      client,
      listening: new Map(),
      ready: client.connect().catch((cause) => {
        lost(cause)
        throw cause
      })
    }
    this.connection = connection
    return connection
  }

  private async detach(subscriber: Subscriber): Promise<void> {
    this.subscribers.delete(subscriber)
    const connection = this.connection
    if (this.subscribers.size > 0 || this.attaching > 0 || connection === undefined) return
    this.connection = undefined
    connection.client.removeAllListeners("end")
    connection.client.removeAllListeners("notification")
    await connection.client.end().catch(() => undefined)
  }
}
