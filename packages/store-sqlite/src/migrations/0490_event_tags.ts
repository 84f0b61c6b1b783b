import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Events carry the tags of the wallets they concern (docs/webhooks.md#customers-and-tags), and a
 * tagged webhook subscription receives — live, by replay and by resend — only the events of its
 * tag. The same table and rule as the other store's migration of this id (read its comment for
 * which fields of an event's object name the wallets it concerns); the fan-out's filter is in
 * `sqliteFanOutSql` (core/src/webhooks/SqlWebhookQueue.ts).
 *
 * A trigger writes the tags of every event inserted, whoever inserts it (the writer thread's
 * batches and the posting's prepared statements alike). Its WHEN clause keeps a program with no
 * tagged wallet to one probe of the wallets' partial tag index per event. SQLite has no
 * statement-level or BEFORE trigger that may write elsewhere and see its rows, so this one runs
 * after each row; the fan-out is a later statement of the same transaction.
 */
const WALLETS_OF_EVENT = `
  SELECT json_extract(NEW.data, '$.wallet_id')
  UNION ALL
  SELECT a.wallet_id FROM issuing_financial_accounts a
    WHERE a.id IN (json_extract(NEW.data, '$.from_financial_account_id'), json_extract(NEW.data, '$.to_financial_account_id'))
  UNION ALL
  SELECT c.wallet_id FROM issuing_cards c
    WHERE c.id = json_extract(NEW.data, '$.card_id')
       OR c.id = (SELECT t.card_id FROM issuing_transactions t
                  WHERE t.id = json_extract(NEW.data, '$.transaction_id') AND t.program_id = NEW.program_id)
  UNION ALL
  SELECT a.wallet_id FROM issuing_transfers x
    JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
    WHERE NEW.type = 'transaction.updated' AND json_extract(NEW.data, '$.card_id') IS NULL
      AND x.transaction_id = json_extract(NEW.data, '$.id')`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_event_tags (
    event_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    program_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (event_id, tag)
  ) WITHOUT ROWID`
  yield* sql`CREATE INDEX issuing_event_tags_by_tag ON issuing_event_tags (program_id, tag, created_at, event_id)`
  // An event whose object names its own tag: a wallet's, or a test event's (its subscription's).
  yield* sql.unsafe(`CREATE TRIGGER issuing_tag_own_events AFTER INSERT ON issuing_events
    WHEN (NEW.type = 'webhook.test' OR NEW.type LIKE 'wallet.%') AND json_extract(NEW.data, '$.tag') IS NOT NULL
    BEGIN
      INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
        VALUES (NEW.id, json_extract(NEW.data, '$.tag'), NEW.program_id, NEW.created_at);
    END`)
  // Any other event: the tags of the wallets its object names.
  yield* sql.unsafe(`CREATE TRIGGER issuing_tag_events AFTER INSERT ON issuing_events
    WHEN NEW.type <> 'webhook.test' AND NEW.type NOT LIKE 'wallet.%'
      AND EXISTS (SELECT 1 FROM issuing_wallets w WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL)
    BEGIN
      INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
        SELECT DISTINCT NEW.id, w.tag, NEW.program_id, NEW.created_at FROM issuing_wallets w
        WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL AND w.id IN (${WALLETS_OF_EVENT});
    END`)
})
