import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Events carry the tags of the wallets they concern (docs/webhooks.md#customers-and-tags), and a
 * tagged webhook subscription receives — live, by replay and by resend — only the events of its
 * tag. The same table, rule and fan-out as the other store's migration of this id.
 *
 * - `issuing_event_tags` holds one row per (event, tag), written only for events that have a tag:
 *   its primary key answers "does this event carry this tag" (the fan-out, the delivery's check),
 *   its second index is a tag's events in time order (a tagged subscription's replay reads its own
 *   events, not the program's).
 * - A row trigger on `issuing_events` writes them, so every writer — the postings' functions, the
 *   card messages, the TypeScript services and the batches — tags alike, from the event's own data
 *   at the time it is written. It runs AFTER the inserting statement, so it sees every row that
 *   statement wrote: `issuing_post_transfer` inserts a transfer and its transaction's event in one
 *   statement of sibling CTEs, and a BEFORE trigger did not find the transfer (tried: the
 *   transaction of a transfer went untagged). Every fan-out therefore runs as a later statement
 *   than its events' insert; a lone emit's, which was one CTE statement, is now
 *   `issuing_append_events`, two statements in one call (still one round trip).
 *   A program with no tagged wallet pays one probe of the wallets' partial tag index per event.
 * - Which wallets an event concerns, by the fields of its object: a wallet's own `tag`; `wallet_id`
 *   (accounts, balances, cards); the accounts of a transfer; the card of a card transaction (or of
 *   the transaction a later object names); the transfers of a transaction that has no card. A test
 *   event carries the tag of the subscription it is sent to.
 * - `issuing_webhook_fan_out_events`, written whole: a subscription with a tag gets a delivery only
 *   for an event that carries it.
 */
const TAG_EVENT = `CREATE FUNCTION issuing_tag_event() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE d jsonb; v_tags text[];
    BEGIN
      IF NEW.type = 'webhook.test' OR NEW.type LIKE 'wallet.%' THEN
        d := NEW.data::jsonb;
        v_tags := CASE WHEN d->>'tag' IS NULL THEN NULL ELSE ARRAY[d->>'tag'] END;
      ELSIF EXISTS (SELECT 1 FROM issuing_wallets w WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL) THEN
        d := NEW.data::jsonb;
        SELECT array_agg(DISTINCT w.tag) INTO v_tags
          FROM issuing_wallets w
          WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL AND w.id IN (
            SELECT d->>'wallet_id'
            UNION ALL
            SELECT a.wallet_id FROM issuing_financial_accounts a
              WHERE a.id IN (d->>'from_financial_account_id', d->>'to_financial_account_id')
            UNION ALL
            SELECT c.wallet_id FROM issuing_cards c
              WHERE c.id = d->>'card_id'
                 OR c.id = (SELECT t.card_id FROM issuing_transactions t
                            WHERE t.id = d->>'transaction_id' AND t.program_id = NEW.program_id)
            UNION ALL
            SELECT a.wallet_id FROM issuing_transfers x
              JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
              WHERE NEW.type = 'transaction.updated' AND d->>'card_id' IS NULL AND x.transaction_id = d->>'id');
      END IF;
      IF v_tags IS NOT NULL THEN
        INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
          SELECT NEW.id, t.tag, NEW.program_id, NEW.created_at FROM unnest(v_tags) AS t(tag);
      END IF;
      RETURN NULL;
    END $$`

/** A lone emit's events appended, then fanned out (after their tags are written), in one call. */
const APPEND_EVENTS = `CREATE FUNCTION issuing_append_events(
      p_ids text[], p_program_ids text[], p_types text[], p_created_at timestamptz[], p_data text[])
    RETURNS integer LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT * FROM unnest(p_ids, p_program_ids, p_types, p_created_at, p_data);
      RETURN issuing_webhook_fan_out_events(p_ids, p_program_ids, p_types, p_created_at, NULL::text);
    END $$`

const FAN_OUT_EVENTS = `CREATE OR REPLACE FUNCTION issuing_webhook_fan_out_events(
      p_event_ids text[], p_program_ids text[], p_event_types text[], p_created_at timestamptz[], p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT e.id || ':' || et.subscription_id, et.program_id, et.subscription_id, e.id, 0, e.created_at, NULL, e.created_at
      FROM unnest(p_event_ids, p_program_ids, p_event_types, p_created_at) AS e(id, program_id, type, created_at)
      JOIN issuing_webhook_event_types et ON et.program_id = e.program_id AND et.event_type = e.type
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE s.disabled = false
        AND (s.tag IS NULL OR EXISTS (SELECT 1 FROM issuing_event_tags t WHERE t.event_id = e.id AND t.tag = s.tag));
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        IF p_channel IS NULL THEN PERFORM set_config('issuing.deliveries_queued', 'yes', true);
        ELSE PERFORM pg_notify(p_channel, 'due');
        END IF;
      END IF;
      RETURN n;
    END $$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_event_tags (
    event_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    program_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (event_id, tag)
  ) WITH (autovacuum_vacuum_insert_threshold = 20000, autovacuum_vacuum_insert_scale_factor = 0)`
  yield* sql`CREATE INDEX issuing_event_tags_by_tag ON issuing_event_tags (program_id, tag, created_at, event_id)`
  yield* sql.unsafe(TAG_EVENT)
  yield* sql`CREATE TRIGGER issuing_tag_events AFTER INSERT ON issuing_events FOR EACH ROW EXECUTE FUNCTION issuing_tag_event()`
  yield* sql.unsafe(FAN_OUT_EVENTS)
  yield* sql.unsafe(APPEND_EVENTS)
})
