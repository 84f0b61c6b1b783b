import pg from "pg"

/**
 * Waits until a backend of this database waits for a lock that backend `holder` holds, and returns
 * the pids of every backend then waiting for it (polled through `watcher`, every 20 ms, for at most 20 s).
 */
export const blockedBy = async (watcher: pg.Client, holder: number, what: string): Promise<ReadonlyArray<number>> => {
  for (let waited = 0; ; waited += 20) {
    const { rows } = await watcher.query(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
      [holder]
    )
    if (rows.length > 0) return rows.map((row) => row.pid as number)
    if (waited > 20_000) throw new Error(`${what} never waited for a lock of backend ${holder}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Runs `use` with two connections of their own to `url`: a `blocker` that takes the locks a test
 * holds, and a `watcher` that looks at who waits for them. Both are closed after it, whatever it does.
 */
export const withLockClients = async <A>(
  url: string,
  use: (clients: { readonly blocker: pg.Client; readonly watcher: pg.Client }) => Promise<A>
): Promise<A> => {
  const blocker = new pg.Client({ connectionString: url })
  const watcher = new pg.Client({ connectionString: url })
  await blocker.connect()
  await watcher.connect()
  try {
    return await use({ blocker, watcher })
  } finally {
    await blocker.end()
    await watcher.end()
  }
}
