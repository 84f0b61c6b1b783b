/** Wallets with their balances, and one wallet: balances, its balance over time, its postings, its cards. */
import type { Page } from "../api.js"
import { type BalancePoint, balanceChart, balanceSeries } from "../chart.js"
import { h, replace } from "../dom.js"
import { money, shortId, time } from "../format.js"
import { AccountNames, nameOf, walletChoices, walletLabel } from "../names.js"
import type { BookTransfer, Card, FinancialAccount, Transfer, Wallet } from "../records.js"
import { actionForm, amountField, badge, errorBox, fields, input, link, minorOf, pagedList, select, success } from "../ui.js"
import type { ViewContext } from "./context.js"
import { transfersList } from "./transfers.js"

type WalletRow = Wallet & { readonly account: FinancialAccount | null }

/** The form that opens a wallet (POST /v1/wallets) and then shows it. */
const newWalletForm = (context: ViewContext): HTMLElement => {
  const name = input("holder-name", { autocomplete: "off", required: true })
  const email = input("holder-email", { type: "email", autocomplete: "off" })
  const currency = input("wallet-currency", { value: "USD", size: "4", maxlength: "3", autocapitalize: "characters" })
  return actionForm({
    id: "new-wallet",
    title: "New wallet",
    fields: [
      ["Holder name", name],
      ["Holder email (optional)", email],
      ["Currency", currency, "ISO 4217, e.g. USD or EUR."]
    ],
    submit: "Create wallet",
    run: async () => {
      const wallet = await context.api.write<Wallet>("POST", "/wallets", {
        holder: { name: name.value, email: email.value.trim() === "" ? null : email.value.trim() },
        currency: currency.value.trim().toUpperCase()
      })
      context.navigate(`/wallets/${wallet.id}`)
      return success(`Wallet of ${wallet.holder.name} created.`)
    }
  })
}

/** The wallets of the program, a page at a time, each with its account's three balances; or one holder's. */
const walletsList = (context: ViewContext, filter: { holder_name?: string; holder_email?: string }, caption: string) =>
  pagedList<WalletRow>({
    caption,
    empty:
      filter.holder_name === undefined && filter.holder_email === undefined
        ? "This program has no wallets yet."
        : "No wallet of that holder.",
    load: async (query) => {
      const page = await context.api.get<Page<Wallet>>("/wallets", { ...query, ...filter })
      // One page's accounts, fetched together: never more than a page of requests.
      const accounts = await Promise.all(
        page.data.map((wallet) => context.api.get<FinancialAccount>(`/financial-accounts/${wallet.financial_account_id}`).catch(() => null))
      )
      return { total_count: page.total_count, data: page.data.map((wallet, index) => ({ ...wallet, account: accounts[index] ?? null })) }
    },
    columns: [
      { title: "Holder", cell: (row) => link(`/wallets/${row.id}`, row.holder.name, `Wallet of ${row.holder.name}`) },
      { title: "Email", cell: (row) => row.holder.email ?? "—" },
      { title: "Posted", cell: (row) => (row.account === null ? "—" : money(row.account.balance.amount, row.account.currency)) },
      { title: "Pending", cell: (row) => (row.account === null ? "—" : money(row.account.pending_balance.amount, row.account.currency)) },
      {
        title: "Available",
        cell: (row) => (row.account === null ? "—" : money(row.account.available_balance.amount, row.account.currency))
      },
      { title: "Created", cell: (row) => time(row.created_at) }
    ]
  })

/**
 * The search of a holder's wallets: the whole name, or the whole email (what holds an `@`),
 * letter case aside, as the API finds them (docs/ledger.md#finding-a-wallet).
 */
const walletSearch = (context: ViewContext, list: HTMLElement): HTMLElement => {
  const query = input("wallet-search", { type: "search", autocomplete: "off", placeholder: "Grace Hopper or grace@example.com" })
  const show = () => {
    const text = query.value.trim()
    if (text === "") return replace(list, walletsList(context, {}, "Wallets"))
    const filter = text.includes("@") ? { holder_email: text } : { holder_name: text }
    replace(list, walletsList(context, filter, `Wallets of ${text}`))
  }
  const clear = h("button", { type: "button" }, "Show all")
  clear.addEventListener("click", () => {
    query.value = ""
    show()
  })
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h("label", { for: "wallet-search" }, "Holder name or email"),
    query,
    h("button", { type: "submit" }, "Find"),
    clear,
    h("p", { class: "muted" }, "The whole name or email, in any letter case.")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    show()
  })
  show()
  return form
}

/** The wallets of the program, searchable by holder, and a new wallet. */
export const walletsView = (context: ViewContext): HTMLElement => {
  const list = h("div", {})
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Wallets"),
    walletSearch(context, list),
    list,
    newWalletForm(context)
  )
}

/** How many postings one step of the chart reads (a page of the API at most). */
const CHART_PAGE = 100

/** The chart, read back from the newest posting a page at a time ("Earlier postings" adds the next). */
const balanceOverTime = (context: ViewContext, account: FinancialAccount): HTMLElement => {
  const section = h(
    "section",
    { "aria-labelledby": "chart-heading", class: "panel" },
    h("h3", { id: "chart-heading" }, "Balance over time")
  )
  const body = h("div", {})
  section.append(body)
  let points: Array<BalancePoint> = []
  let before = account.balance.amount
  let cursor: string | undefined
  let more = true
  const draw = () => {
    const earlier = h("button", { type: "button", disabled: !more }, "Earlier postings")
    earlier.addEventListener("click", () => void load())
    replace(
      body,
      points.length === 0
        ? h("p", { class: "muted" }, "No postings yet.")
        : h("div", { class: "chart-box" }, balanceChart(points, before, account.currency)),
      h("p", { class: "muted" }, `${points.length} most recent postings shown, balance after each.`, " ", earlier)
    )
  }
  const load = async () => {
    try {
      const page = await context.api.get<Page<BookTransfer>>(`/financial-accounts/${account.id}/book-transfers`, {
        page_size: CHART_PAGE,
        starting_after: cursor
      })
      const series = balanceSeries(before, page.data, account.id)
      points = [...series.points, ...points]
      before = series.before
      cursor = page.data[page.data.length - 1]?.id
      more = page.data.length === CHART_PAGE
      draw()
    } catch (error) {
      replace(body, errorBox(error))
    }
  }
  void load()
  return section
}

/** Book transfers with their entries (the ledger's view of a wallet or a transaction), accounts named. */
export const bookTransfersList = (
  context: ViewContext,
  caption: string,
  load: (query: { page_size: number; starting_after?: string | undefined }) => Promise<Page<BookTransfer>>
) => {
  const names = new AccountNames(context.api)
  return pagedList<BookTransfer>({
    caption,
    empty: "No book transfers.",
    pageSize: 10,
    load,
    columns: [
      { title: "Posted", cell: (transfer) => time(transfer.posted_at) },
      { title: "Amount", cell: (transfer) => money(transfer.amount.amount, transfer.amount.currency) },
      {
        title: "Transaction",
        cell: (transfer) =>
          link(`/transactions/${transfer.transaction_id}`, shortId(transfer.transaction_id), `Transaction ${transfer.transaction_id}`)
      },
      {
        title: "Entries",
        cell: (transfer) =>
          h(
            "ul",
            { class: "entries" },
            ...transfer.entries.map((entry) =>
              h(
                "li",
                {},
                `${entry.entry_type} ${money(entry.amount.amount, entry.amount.currency)} · ${entry.book} · `,
                nameOf(names, entry.financial_account_id)
              )
            )
          )
      }
    ]
  })
}

/** The cards of a wallet, or of the program. */
export const cardsList = (context: ViewContext, caption: string, filter: { wallet_id?: string; state?: string; last_four?: string }) =>
  pagedList<Card>({
    caption,
    empty: "No cards.",
    load: (query) => context.api.get<Page<Card>>("/cards", { ...query, ...filter }),
    columns: [
      { title: "Card", cell: (card) => link(`/cards/${card.id}`, `•••• ${card.last_four}`, `Card ending ${card.last_four}`) },
      { title: "State", cell: (card) => badge(card.state) },
      { title: "Type", cell: (card) => card.type },
      { title: "Expires", cell: (card) => `${String(card.exp_month).padStart(2, "0")}/${card.exp_year}` },
      { title: "Created", cell: (card) => time(card.created_at) }
    ]
  })

/** Issues a card on the wallet (POST /v1/cards) and opens it. */
const newCardForm = (context: ViewContext, wallet: Wallet): HTMLElement => {
  const type = select("card-type", [
    ["VIRTUAL", "Virtual"],
    ["PHYSICAL", "Physical"]
  ])
  return actionForm({
    id: "new-card",
    title: "Issue a card",
    fields: [["Card type", type]],
    submit: "Issue card",
    run: async () => {
      const card = await context.api.write<Card>("POST", "/cards", { wallet_id: wallet.id, type: type.value })
      context.navigate(`/cards/${card.id}`)
      return success(`Card •••• ${card.last_four} issued.`)
    }
  })
}

/**
 * Funds the wallet from outside, in the sandbox only: an inbound instant transfer (POST
 * /v1/transfers, `fednow_instant` to the wallet's account), which the sandbox settles at once.
 */
const fundForm = (context: ViewContext, account: FinancialAccount): HTMLElement => {
  const [label, amount, hint] = amountField("fund-amount", account.currency)
  return actionForm({
    id: "fund-wallet",
    title: "Fund this wallet (sandbox)",
    intro: "An inbound instant transfer from outside the platform, as a bank would send it.",
    fields: [[label, amount, hint]],
    submit: "Fund wallet",
    run: async () => {
      const minor = minorOf(amount, account.currency)
      await context.api.write<Transfer>("POST", "/transfers", {
        payment_rail: "fednow_instant",
        amount: minor,
        currency: account.currency,
        to_financial_account_id: account.id
      })
      context.rerender()
      return success(`${money(minor, account.currency)} sent to this wallet.`)
    }
  })
}

/** Moves money from this wallet to another of the program's (a book transfer, POST /v1/transfers). */
const bookTransferForm = (context: ViewContext, wallet: Wallet, account: FinancialAccount, others: ReadonlyArray<Wallet>): HTMLElement => {
  const to = select(
    "transfer-to",
    others.filter((other) => other.id !== wallet.id).map((other) => [other.financial_account_id, walletLabel(other)] as const)
  )
  const [label, amount, hint] = amountField("transfer-amount", account.currency)
  const description = input("transfer-description", { maxlength: "500", autocomplete: "off" })
  return actionForm({
    id: "book-transfer",
    title: "Send to another wallet",
    fields: [
      ["To wallet", to, "The program's newest 100 wallets, by holder."],
      [label, amount, hint],
      ["Description (optional)", description]
    ],
    submit: "Send",
    run: async () => {
      const minor = minorOf(amount, account.currency)
      if (to.value === "") throw "Choose the wallet to send to."
      await context.api.write<Transfer>("POST", "/transfers", {
        payment_rail: "book",
        amount: minor,
        currency: account.currency,
        from_financial_account_id: account.id,
        to_financial_account_id: to.value,
        description: description.value.trim() === "" ? null : description.value.trim()
      })
      context.rerender()
      return success(`${money(minor, account.currency)} sent.`)
    }
  })
}

/** One wallet: its balances and chart, and what can be done with it (fund, send, issue a card). */
export const walletView = async (context: ViewContext, walletId: string): Promise<HTMLElement> => {
  const wallet = await context.api.get<Wallet>(`/wallets/${encodeURIComponent(walletId)}`)
  const [account, others] = await Promise.all([
    context.api.get<FinancialAccount>(`/financial-accounts/${wallet.financial_account_id}`),
    walletChoices(context.api)
  ])
  const names = new AccountNames(context.api)
  names.know([wallet, ...others])
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, `Wallet of ${wallet.holder.name}`),
    fields([
      ["Wallet", h("code", {}, wallet.id)],
      ["Holder", `${wallet.holder.name}${wallet.holder.email === null ? "" : ` <${wallet.holder.email}>`}`],
      ["Tag", wallet.tag === null ? "—" : h("code", {}, wallet.tag)],
      ["Financial account", h("code", {}, account.id)],
      ["Posted balance", h("span", { "data-balance": "posted" }, money(account.balance.amount, account.currency))],
      ["Pending", h("span", { "data-balance": "pending" }, money(account.pending_balance.amount, account.currency))],
      ["Available", h("span", { "data-balance": "available" }, money(account.available_balance.amount, account.currency))],
      ["Created", time(wallet.created_at)]
    ]),
    balanceOverTime(context, account),
    h(
      "div",
      { class: "forms" },
      context.sandbox ? fundForm(context, account) : null,
      bookTransferForm(context, wallet, account, others),
      newCardForm(context, wallet)
    ),
    h("h3", {}, "Cards"),
    cardsList(context, "Cards of this wallet", { wallet_id: wallet.id }),
    h("h3", {}, "Transfers"),
    transfersList(context, names, "Transfers of this wallet", { wallet_id: wallet.id }),
    h("h3", {}, "Book transfers"),
    bookTransfersList(context, "Book transfers of this wallet", (query) =>
      context.api.get<Page<BookTransfer>>(`/financial-accounts/${account.id}/book-transfers`, query)
    )
  )
}
