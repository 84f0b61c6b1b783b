import { SqlError } from "@effect/sql/SqlError"
import { Effect, Stream } from "effect"
import pg from "pg"

/** The `application_name` of a node's listening connection (operators see it in pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = "issuing-listen"

/**
 * What a listening connection reports: each (re)connect, then each notification's payload, and
 * whether it came while the connection had none of its own statements in flight (`idle`).
 */
export type ListenEvent = { readonly _tag: "Connected" } | { readonly _tag: "Notified"; readonly payload: string; readonly idle: boolean }

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
  /** This connection's own statements (LISTENs and reads) not yet answered. */
  readonly inFlight: Set<Promise<unknown>>
}

/**
 * Counts a statement of the connection's own as in flight until it is answered. The count drops
 * a microtask after the answer, so a notification that came in the same read from the socket is
 * counted as not idle (the safe side).
 */
const track = <A>(connection: Connection, statement: Promise<A>): Promise<A> => {
  const settled = statement.finally(() => connection.inFlight.delete(settled))
  connection.inFlight.add(settled)
  return settled
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
  /** Callers of `quiet` not yet done: reads go to the pool meanwhile. */
  private quieted = 0

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
    if (connection === undefined || this.quieted > 0) return undefined
    try {
      await connection.ready
    } catch {
      return undefined
    }
    if (this.connection !== connection || this.quieted > 0) return undefined
    return (await track(connection, connection.client.query(text))).rows
  }

  /**
   * Keeps the connection free of statements of its own — reads go to the pool (`read` gives
   * undefined) and those in flight are waited for — until the returned release is called. A
   * notification that arrives meanwhile was pushed by the server to this connection's session on
   * its own: through a transaction pooler, which lends a server connection only for a statement's
   * time, none can (docs/operations.md#pgbouncer).
   */
  async quiet(): Promise<() => void> {
    this.quieted++
    let released = false
    const release = () => {
      if (!released) this.quieted--
      released = true
    }
    const connection = this.connection
    if (connection !== undefined) await Promise.allSettled([...connection.inFlight])
    return release
  }

  private async attach(subscriber: Subscriber): Promise<void> {
    const connection = this.connection ?? this.open()
    this.attaching++
    try {
      await connection.ready
      let listened = connection.listening.get(subscriber.channel)
      if (listened === undefined) {
        listened = track(connection, connection.client.query(`LISTEN ${connection.client.escapeIdentifier(subscriber.channel)}`))
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
    const inFlight = new Set<Promise<unknown>>()
    client.on("notification", (message) => {
      const idle = inFlight.size === 0
      for (const subscriber of this.subscribers)
        if (subscriber.channel === message.channel) subscriber.single({ _tag: "Notified", payload: message.payload ?? "", idle })
    })
    const connection: Connection = {
      client,
      listening: new Map(),
      inFlight,
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
