/** Transactions: the list, and one transaction with its card-event timeline and its book transfers. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { money, time, shortId } from "../format.js"
import type { BookTransfer, Card, CardEvent, Transaction } from "../records.js"
import { badge, fields, link, table } from "../ui.js"
import { transactionsList } from "./cards.js"
import type { ViewContext } from "./context.js"
import { bookTransfersList } from "./wallets.js"

const STATUSES = ["", "PENDING", "SETTLED", "VOIDED", "EXPIRED", "DECLINED"] as const

/** What each card message means (docs/card-transactions.md). */
const EVENT_NAMES: Record<string, string> = {
  AUTHORIZATION: "Authorization",
  FINANCIAL_AUTHORIZATION: "Financial authorization",
  INCREMENTAL_AUTHORIZATION: "Increment",
  AUTHORIZATION_ADVICE: "Advice (stand-in)",
  AUTHORIZATION_REVERSAL: "Reversal",
  AUTHORIZATION_EXPIRY: "Expiry",
  CLEARING: "Clearing",
  RETURN: "Return"
}

/** The program's transactions, filtered by status. */
export const transactionsView = (context: ViewContext): HTMLElement => {
  const list = h("div", {})
  const status = h(
    "select",
    { id: "transaction-status" },
    ...STATUSES.map((value) => h("option", { value }, value === "" ? "Any status" : value))
  )
  const show = () => replace(list, transactionsList(context, "Transactions", status.value === "" ? {} : { status: status.value }))
  status.addEventListener("change", show)
  show()
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Transactions"),
    h("div", { class: "filters" }, h("label", { for: "transaction-status" }, "Status"), status),
    list
  )
}

/**
 * Who sent the messages: the merchant as the network named it (name, city, country, category,
 * acceptor id), else the name and category an older transaction kept; null when none was given.
 */
const merchantLine = (transaction: Transaction): HTMLElement | null => {
  const merchant = transaction.merchant
  if (merchant === null && transaction.merchant_name === null && transaction.mcc === null) return null
  const place = merchant === null ? [] : [merchant.city, merchant.country].filter((part) => part !== null)
  const parts = [
    place.length === 0 ? null : place.join(", "),
    (merchant?.mcc ?? transaction.mcc) === null ? null : `MCC ${merchant?.mcc ?? transaction.mcc}`,
    merchant === null ? null : `acceptor ${merchant.acceptor_id}`,
    transaction.network_transaction_id === null ? null : `network transaction ${transaction.network_transaction_id}`
  ].filter((part) => part !== null)
  return h(
    "p",
    { class: "timeline-merchant", "data-field": "merchant" },
    h("strong", {}, merchant?.name ?? transaction.merchant_name ?? "Unnamed merchant"),
    parts.length === 0 ? null : ` · ${parts.join(" · ")}`
  )
}

/**
 * The card messages in the order they happened, each with what it did (its result, the ISO 8583
 * response code it was answered with as the API gives it, and its decline reason), under the
 * merchant that sent them.
 */
const timeline = (transaction: Transaction): HTMLElement =>
  transaction.card_events.length === 0
    ? h("p", { class: "muted" }, "Not a card transaction: no card messages.")
    : h("div", { class: "card-timeline" }, merchantLine(transaction), timelineEvents(transaction))

const timelineEvents = (transaction: Transaction): HTMLElement =>
  h(
    "ol",
    { class: "timeline", "aria-label": "Card events" },
    ...[...transaction.card_events]
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map((event: CardEvent) =>
        h(
          "li",
          { "data-event-type": event.type, class: event.result === "DECLINED" ? "declined" : "" },
          h("strong", {}, EVENT_NAMES[event.type] ?? event.type),
          ` ${money(event.amount, transaction.currency)} · `,
          badge(event.result),
          event.response_code === null
            ? null
            : h("span", { class: "response-code", "data-field": "response-code" }, " · response code ", h("code", {}, event.response_code)),
          event.decline_reason === null ? null : ` ${event.decline_reason}`,
          h("span", { class: "muted" }, ` · ${time(event.created_at)}`)
        )
      )
  )

/** One transaction. */
export const transactionView = async (context: ViewContext, transactionId: string): Promise<HTMLElement> => {
  const transaction = await context.api.get<Transaction>(`/transactions/${encodeURIComponent(transactionId)}`)
  // The card by its last four digits, not its id (null when it cannot be read).
  const card = transaction.card_id === null ? null : await context.api.get<Card>(`/cards/${transaction.card_id}`).catch(() => null)
  const amount = (value: number | null) => (value === null ? "—" : money(value, transaction.currency))
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h(
      "h2",
      { id: "view-title", tabindex: "-1" },
      `Transaction ${transaction.merchant_name ?? shortId(transaction.id)} `,
      badge(transaction.status)
    ),
    fields([
      ["Transaction", h("code", {}, transaction.id)],
      ["Status", h("span", { "data-field": "status" }, transaction.status)],
      ["Amount", money(transaction.amount, transaction.currency)],
      [
        "Card",
        transaction.card_id === null
          ? "—"
          : link(
              `/cards/${transaction.card_id}`,
              card === null ? shortId(transaction.card_id) : `•••• ${card.last_four}`,
              `Card ${transaction.card_id}`
            )
      ],
      [
        "Merchant",
        transaction.merchant_name === null
          ? "—"
          : `${transaction.merchant_name}${transaction.mcc === null ? "" : ` (MCC ${transaction.mcc})`}`
      ],
      ["Authorized", amount(transaction.authorized_amount)],
      ["Pending (hold)", amount(transaction.pending_amount)],
      ["Settled", amount(transaction.settled_amount)],
      ["Hold expires", time(transaction.expires_at)],
      ["Decline reason", transaction.decline_reason ?? "—"],
      ["Created", time(transaction.created_at)]
    ]),
    h("h3", {}, "Timeline"),
    timeline(transaction),
    transaction.request_history.length === 0
      ? null
      : table(
          "Real-time decisions asked",
          ["Asked", "Amount", "Approved", "Reason"],
          transaction.request_history.map((entry) => [
            time(entry.created_at),
            money(entry.amount, transaction.currency),
            entry.approved ? "yes" : "no",
            entry.reason
          ])
        ),
    h("h3", {}, "Book transfers"),
    bookTransfersList(context, "Book transfers of this transaction", (query) =>
      context.api.get<Page<BookTransfer>>(`/transactions/${transaction.id}/book-transfers`, query)
    )
  )
}
