import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { replaceOnce } from "./functionText.js"
import { POST_CARD_MESSAGE_0230 } from "./0230_card_holds.js"
import { SETTLEMENT_SLOTS } from "./0300_settlement_slots.js"
import { POST_TRANSFER_0320 } from "./0320_posting_counts.js"

/**
 * The balance rows a posting between two accounts adds into, locked in the one order every write
 * takes them (docs/ledger.md#posting-rules): each wallet's rows (slot 0) and this backend's slot of
 * a settlement account's (docs/ledger.md#settlement-slots), by (account, book, slot). Returns the
 * slot, which the posting then adds into. The one place the slot rule is written.
 */
const LOCK_POSTING_ROWS = `CREATE FUNCTION issuing_lock_posting_rows(p_source text, p_target text)
    RETURNS smallint LANGUAGE plpgsql AS $$
    DECLARE v_slot smallint := pg_backend_pid() % ${SETTLEMENT_SLOTS};
    BEGIN
      PERFORM 1 FROM issuing_balances l JOIN issuing_financial_accounts a ON a.id = l.financial_account_id
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      RETURN v_slot;
    END $$`

/** 0320's `issuing_post_transfer`, its rows locked (and its slot chosen) by `issuing_lock_posting_rows`. */
export const POST_TRANSFER_0470 = replaceOnce(
  replaceOnce(POST_TRANSFER_0320, `      v_slot smallint := pg_backend_pid() % ${SETTLEMENT_SLOTS};\n`, "      v_slot smallint;\n"),
  `      -- The rows this posting adds into: a wallet's (slot 0), this backend's slot of a settlement account.
      PERFORM 1 FROM issuing_balances l JOIN issuing_financial_accounts a ON a.id = l.financial_account_id
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
`,
  `      -- The rows this posting adds into: a wallet's (slot 0), this backend's slot of a settlement account.
      v_slot := issuing_lock_posting_rows(p_source, p_target);
`
)

/** 0230's `issuing_post_card_message`, taking its transfer (`p_transfer`) and that transfer's locks first. */
const POST_CARD_MESSAGE_0470 = [
  // The transfer, as one element of issuing_post_transfers' array (NULL: none).
  [
    "p_balance_event_id text, p_channel text)",
    `p_balance_event_id text, p_channel text,
      p_transfer jsonb)`
  ],
  ["v_types text[] := p_event_types;", "v_types text[] := p_event_types; v_transfer record;"],
  // The transfer's rows first, in the order every posting takes them (the wallet's row among them).
  [
    `      IF p_require_available > 0 OR p_pending_delta <> 0 THEN
        SELECT b.credits_minor`,
    `      IF p_require_available > 0 OR p_pending_delta <> 0 THEN
        IF p_transfer IS NOT NULL THEN
          PERFORM issuing_lock_posting_rows(p_transfer->>'source', p_transfer->>'target');
        END IF;
        SELECT b.credits_minor`
  ],
  // The transaction row is in; its transfer joins it (no funds check: the merchant has been paid).
  [
    "      RETURN QUERY SELECT true, v_available, NULL::text;",
    `      IF p_transfer IS NOT NULL THEN
        SELECT x.posted, x.available, x.refusal INTO v_transfer FROM issuing_post_transfers(jsonb_build_array(p_transfer), p_channel) x;
        IF NOT v_transfer.posted THEN
          RETURN QUERY SELECT false, v_transfer.available, v_transfer.refusal;
          RETURN;
        END IF;
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;`
  ]
].reduce((text, [from, to]) => replaceOnce(text, from!, to!), POST_CARD_MESSAGE_0230)

/**
 * Migration 0470: a card message is ONE statement, its transfer included
 * (docs/card-transactions.md#what-a-message-writes).
 *
 * `issuing_post_card_message` gains `p_transfer`: the message's transfer as one element of
 * `issuing_post_transfers`' array (NULL when the message moves no money), posted through that
 * function after the message's rows, in the same statement. Before, the store sent the message and
 * then its transfer as two statements of the caller's transaction, and — for a message that both
 * locks the wallet's row and posts a transfer (a clearing, a single-message approval) — a third
 * before them that locked the transfer's balance rows, repeating in TypeScript the lock statement
 * and slot rule of `issuing_post_transfer`. That lock is now `issuing_lock_posting_rows`, which both
 * functions call: the message takes the transfer's rows in (account, book, slot) order before the
 * wallet's row, as a return from the settlement account into the wallet takes them, so the two
 * cannot deadlock; and a message's rows and its transfer are written by one statement.
 *
 * The rest of the message is 0230's text with the four changes above: the card still ACTIVE (FOR
 * SHARE), the wallet's principal row locked when the hold moves or funds are needed, the
 * transaction written, the pending amount moved, the events written and fanned out. When its
 * transfer is refused (only the balance bounds can refuse it: it has no funds check), the call
 * answers the transfer's refusal and the caller's transaction rolls the message back, as before.
 *
 * Functions only, no row changes: it runs the same on a populated database.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(LOCK_POSTING_ROWS)
  yield* sql.unsafe(POST_TRANSFER_0470)
  yield* sql`DROP FUNCTION issuing_post_card_message(jsonb, text, text, bigint, bigint, text, timestamptz, text[], text[], text[], text, text)`
  yield* sql.unsafe(POST_CARD_MESSAGE_0470)
})
