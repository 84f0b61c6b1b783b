/** Cards: the list, and one card with its state, controls, actions, secure display and transactions. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { money, shortId, time, toMajorInput, toMinor } from "../format.js"
import type { Card, FinancialAccount, Transaction, Wallet } from "../records.js"
import { actionButton, badge, errorBox, fields, link, pagedList } from "../ui.js"
import type { ViewContext } from "./context.js"
import { cardsList } from "./wallets.js"

const STATES = ["", "ACTIVE", "FROZEN", "CLOSED"] as const
const INTERVALS = ["PER_TRANSACTION", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME"] as const

/** The program's cards, filtered by state and found by their last four digits (`GET /v1/cards?last_four=`). */
export const cardsView = (context: ViewContext): HTMLElement => {
  const list = h("div", {})
  const state = h("select", { id: "card-state" }, ...STATES.map((value) => h("option", { value }, value === "" ? "Any state" : value)))
  const lastFour = h("input", {
    id: "card-last-four",
    type: "search",
    inputmode: "numeric",
    maxlength: "4",
    size: "6",
    autocomplete: "off",
    placeholder: "4242"
  })
  const show = () => {
    const digits = lastFour.value.trim()
    replace(
      list,
      cardsList(context, digits === "" ? "Cards" : `Cards ending ${digits}`, {
        ...(state.value === "" ? {} : { state: state.value }),
        ...(digits === "" ? {} : { last_four: digits })
      })
    )
  }
  state.addEventListener("change", show)
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h("label", { for: "card-state" }, "State"),
    state,
    h("label", { for: "card-last-four" }, "Last four digits"),
    lastFour,
    h("button", { type: "submit" }, "Find")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    show()
  })
  show()
  return h("section", { "aria-labelledby": "view-title" }, h("h2", { id: "view-title", tabindex: "-1" }, "Cards"), form, list)
}

/** Transactions of a card or of the program. */
export const transactionsList = (context: ViewContext, caption: string, filter: { card_id?: string; status?: string }) =>
  pagedList<Transaction>({
    caption,
    empty: "No transactions.",
    load: (query) => context.api.get<Page<Transaction>>("/transactions", { ...query, ...filter }),
    columns: [
      {
        title: "Transaction",
        cell: (transaction) =>
          link(`/transactions/${transaction.id}`, transaction.merchant_name ?? shortId(transaction.id), `Transaction ${transaction.id}`)
      },
      { title: "Status", cell: (transaction) => badge(transaction.status) },
      { title: "Amount", cell: (transaction) => money(transaction.amount, transaction.currency) },
      { title: "Created", cell: (transaction) => time(transaction.created_at) }
    ]
  })

const mccList = (text: string): Array<string> | null => {
  const codes = text
    .split(/[\s,]+/)
    .map((code) => code.trim())
    .filter((code) => code.length > 0)
  return codes.length === 0 ? null : codes
}

/** The spend controls as a form: each sent as it stands, an empty one cleared (PATCH /v1/cards/{id}); the limit in major units of `currency`. */
const spendControls = (context: ViewContext, card: Card, currency: string, status: HTMLElement, reload: () => void): HTMLElement => {
  const allowed = h("input", {
    id: "allowed-mcc",
    type: "text",
    value: card.allowed_mcc_codes.join(", "),
    inputmode: "numeric",
    "aria-describedby": "mcc-help"
  })
  const blocked = h("input", {
    id: "blocked-mcc",
    type: "text",
    value: card.blocked_mcc_codes.join(", "),
    inputmode: "numeric",
    "aria-describedby": "mcc-help"
  })
  const interval = h(
    "select",
    { id: "period-interval" },
    h("option", { value: "" }, "No spending period"),
    ...INTERVALS.map((value) => h("option", { value, selected: card.spending_period?.interval === value }, value))
  )
  const amount = h("input", {
    id: "period-amount",
    type: "text",
    inputmode: "decimal",
    value: card.spending_period === null ? "" : toMajorInput(card.spending_period.amount, currency),
    "aria-describedby": "amount-help"
  })
  const save = h("button", { type: "submit", disabled: card.state === "CLOSED" }, "Save controls")
  const form = h(
    "form",
    { class: "controls", "aria-labelledby": "controls-heading" },
    h("h3", { id: "controls-heading" }, "Spend controls"),
    h("p", { id: "mcc-help", class: "muted" }, "Merchant category codes: 4 digits each, separated by commas. Empty clears the list."),
    h("label", { for: "allowed-mcc" }, "Allowed MCCs"),
    allowed,
    h("label", { for: "blocked-mcc" }, "Blocked MCCs"),
    blocked,
    h("label", { for: "period-interval" }, "Spending period"),
    interval,
    h("label", { for: "period-amount" }, `Period limit (${currency})`),
    amount,
    h("p", { id: "amount-help", class: "muted" }, `In ${currency}, e.g. 50.00.`),
    save
  )
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    let limit: number | null = null
    if (interval.value !== "") {
      const parsed = toMinor(amount.value, currency)
      if ("problem" in parsed) {
        replace(status, h("p", { class: "error", role: "alert" }, `Period limit: ${parsed.problem}`))
        return
      }
      limit = parsed.minor
    }
    save.disabled = true
    try {
      // The period is sent only when it was changed: sent, it replaces every limit of the card.
      const period = limit === null ? null : { interval: interval.value, amount: limit }
      const changed = JSON.stringify(period) !== JSON.stringify(card.spending_period)
      await context.api.write<Card>("PATCH", `/cards/${card.id}`, {
        allowed_mcc_codes: mccList(allowed.value),
        blocked_mcc_codes: mccList(blocked.value),
        ...(changed ? { spending_period: period } : {})
      })
      reload()
    } catch (error) {
      replace(status, errorBox(error))
      save.disabled = false
    }
  })
  return form
}

/**
 * The secure card display (docs/card-data.md#embed-sessions-and-the-embed-document): an embed
 * session, then its `embed_url` in an iframe sandboxed to scripts only, without a referrer. The
 * console never receives the number: the frame fetches it, and its origin is opaque to this page.
 */
const cardDisplay = (context: ViewContext, card: Card): HTMLElement => {
  const slot = h("div", { class: "card-display", "aria-live": "polite" })
  const status = h("div", {})
  const show = actionButton("Show card details", status, async () => {
    const session = await context.api.write<{ embed_url: string; expires_at: string }>("POST", `/cards/${card.id}/embed-sessions`)
    const frame = h("iframe", {
      src: session.embed_url,
      sandbox: "allow-scripts",
      referrerpolicy: "no-referrer",
      title: `Card details of the card ending ${card.last_four}`,
      width: "380",
      height: "230"
    })
    const hide = h("button", { type: "button" }, "Hide card details")
    hide.addEventListener("click", () => replace(slot))
    replace(status)
    replace(
      slot,
      frame,
      h("p", { class: "muted" }, `Shown by the platform in a sandboxed frame; the session ends ${time(session.expires_at)}. `, hide)
    )
  })
  return h(
    "section",
    { class: "panel", "aria-labelledby": "display-heading" },
    h("h3", { id: "display-heading" }, "Card details"),
    show,
    status,
    slot
  )
}

/** One card. */
export const cardView = async (context: ViewContext, cardId: string): Promise<HTMLElement> => {
  const { rerender } = context
  const card = await context.api.get<Card>(`/cards/${encodeURIComponent(cardId)}`)
  const wallet = await context.api.get<Wallet>(`/wallets/${card.wallet_id}`)
  const { currency } = await context.api.get<FinancialAccount>(`/financial-accounts/${wallet.financial_account_id}`)
  const status = h("div", { role: "status" })
  const act = (name: string, text: string) =>
    actionButton(
      text,
      status,
      async () => {
        await context.api.write<Card>("POST", `/cards/${card.id}/${name}`)
        rerender()
      },
      { "data-action": name }
    )
  const confirmThen = (name: string, text: string, warning: string) => {
    const button = h("button", { type: "button", "data-action": name }, text)
    button.addEventListener("click", () => {
      const confirm = act(name, `Confirm: ${text.toLowerCase()}`)
      const cancel = h("button", { type: "button" }, "Cancel")
      cancel.addEventListener("click", () => replace(status))
      replace(status, h("p", { class: "warning" }, warning, " ", confirm, " ", cancel))
      confirm.focus()
    })
    return button
  }
  const actions =
    card.state === "CLOSED"
      ? [h("p", { class: "muted" }, "A closed card cannot change.")]
      : [
          card.state === "ACTIVE" ? act("freeze", "Freeze") : act("unfreeze", "Unfreeze"),
          confirmThen("reissue", "Reissue", "Reissuing gives the card a new number and expiry; the old number stops working."),
          confirmThen("close", "Close card", "Closing is final: a closed card never works again.")
        ]
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, `Card •••• ${card.last_four} `, h("span", { id: "card-state-badge" }, badge(card.state))),
    fields([
      ["Card", h("code", {}, card.id)],
      ["State", h("span", { "data-field": "state" }, card.state)],
      ["Type", card.type],
      ["Wallet", link(`/wallets/${card.wallet_id}`, wallet.holder.name, `Wallet of ${wallet.holder.name}`)],
      ["Expires", `${String(card.exp_month).padStart(2, "0")}/${card.exp_year}`],
      ["Allowed MCCs", card.allowed_mcc_codes.length === 0 ? "any" : card.allowed_mcc_codes.join(", ")],
      ["Blocked MCCs", card.blocked_mcc_codes.length === 0 ? "none" : card.blocked_mcc_codes.join(", ")],
      [
        "Spending limits",
        card.spending_limits.length === 0
          ? "none"
          : card.spending_limits
              .map(
                (one) =>
                  `${one.interval}: ${[
                    one.amount === null ? null : money(one.amount, currency),
                    one.count === null ? null : `${one.count} authorizations`
                  ]
                    .filter((part) => part !== null)
                    .join(", ")}`
              )
              .join("; ")
      ],
      ["Updated", time(card.updated_at)]
    ]),
    h("div", { class: "actions", role: "group", "aria-label": "Card actions" }, ...actions),
    status,
    card.state === "CLOSED" ? null : cardDisplay(context, card),
    spendControls(context, card, currency, status, rerender),
    h("h3", {}, "Transactions"),
    transactionsList(context, "Transactions of this card", { card_id: card.id })
  )
}
