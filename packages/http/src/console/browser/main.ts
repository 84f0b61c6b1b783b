/**
 * The console (docs/console.md): sign-in, the program being looked at, and the views, routed by
 * the URL's fragment (`#/cards/<id>`), so a view can be bookmarked without the credential in it.
 */
import { Api, ApiError, type Page } from "./api.js"
import { h, replace } from "./dom.js"
import { time } from "./format.js"
import type { Program } from "./records.js"
import { forget, saveCredential, savedCredential, savedProgram, saveProgram } from "./session.js"
import { errorBox, link, pagedList } from "./ui.js"
import { cardsView, cardView } from "./views/cards.js"
import type { ViewContext } from "./views/context.js"
import { eventsView, eventView } from "./views/events.js"
import { apiKeysView } from "./views/keys.js"
import { transactionsView, transactionView } from "./views/transactions.js"
import { transfersView } from "./views/transfers.js"
import { cardholdersView } from "./views/cardholders.js"
import { walletsView, walletView } from "./views/wallets.js"
import { webhooksView, webhookView } from "./views/webhooks.js"

const basePath = document.body.dataset.basePath ?? ""
const root = document.getElementById("app")!

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

interface Session {
  readonly api: Api
  readonly sandbox: boolean
  programId: string | null
  /** The programs the credential may list (an OAuth token may not: it names its program instead). */
  programs: ReadonlyArray<Program> | null
}

/** The sign-in form: one password field, submitted with Enter; the credential is tried before it is kept. */
const signIn = (problem?: unknown) => {
  const input = h("input", {
    id: "credential",
    name: "credential",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "credential-help"
  })
  const status = h("div", { "aria-live": "polite" }, problem === undefined ? null : errorBox(problem))
  const form = h(
    "form",
    { class: "sign-in", "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Issuing console"),
    h("label", { for: "credential" }, "API key or access token"),
    input,
    h(
      "p",
      { id: "credential-help", class: "muted" },
      "Paste a key (sk_…) or an OAuth access token (at_…) and press Enter. It stays in this tab only and is never sent anywhere but this server's API."
    ),
    h("button", { type: "submit" }, "Sign in"),
    status
  )
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    const credential = input.value.trim()
    if (credential === "") return
    replace(status, h("p", { class: "muted" }, "Signing in…"))
    try {
      const session = await open(credential)
      saveCredential(credential)
      input.value = ""
      start(session)
    } catch (error) {
      replace(status, errorBox(error))
      input.focus()
    }
  })
  replace(root, h("main", { class: "centered" }, form))
  input.focus()
}

/**
 * Opens a session: the credential's programs (the first of them, oldest first, unless the tab had
 * one chosen). A key that may not list programs (an OAuth token) is asked for its program id.
 */
const open = async (credential: string): Promise<Session> => {
  const session: Session = {
    api: new Api(basePath, credential, () => session.programId),
    sandbox: credential.startsWith("sk_sandbox_"),
    programId: null,
    programs: null
  }
  try {
    const page = await session.api.get<Page<Program>>(
      "/programs",
      { page_size: 100, order_by: "created_at", ascending: true },
      "organization"
    )
    session.programs = page.data
    const saved = savedProgram()
    session.programId = page.data.find((program) => program.id === saved)?.id ?? page.data[0]?.id ?? null
  } catch (error) {
    // 401: the credential itself is refused. 403: it may not list programs; it names one below.
    if (!(error instanceof ApiError) || error.status !== 403) throw error
    const saved = savedProgram()
    session.programId = saved
  }
  return session
}

/** The program picker of the header: a select over the listed programs, or a program id field. */
const programPicker = (session: Session, onChange: () => void): HTMLElement => {
  if (session.programs !== null && session.programs.length > 0) {
    const select = h(
      "select",
      { id: "program" },
      ...session.programs.map((program) => h("option", { value: program.id, selected: program.id === session.programId }, program.name))
    )
    select.addEventListener("change", () => {
      session.programId = select.value
      saveProgram(select.value)
      onChange()
    })
    return h("div", { class: "program" }, h("label", { for: "program" }, "Program"), select)
  }
  const input = h("input", {
    id: "program",
    type: "text",
    value: session.programId ?? "",
    placeholder: "program id",
    size: "36",
    spellcheck: "false"
  })
  const form = h("form", { class: "program" }, h("label", { for: "program" }, "Program id"), input, h("button", { type: "submit" }, "Use"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    session.programId = UUID.test(input.value.trim()) ? input.value.trim().toLowerCase() : null
    if (session.programId !== null) saveProgram(session.programId)
    onChange()
  })
  return form
}

const NAV = [
  ["/programs", "Programs"],
  ["/wallets", "Wallets"],
  ["/cardholders", "Cardholders"],
  ["/cards", "Cards"],
  ["/transactions", "Transactions"],
  ["/transfers", "Transfers"],
  ["/webhooks", "Webhooks"],
  ["/events", "Events"],
  ["/api-keys", "API keys"]
] as const

/** The programs the credential may see, each a way into it. */
const programsView = (session: Session, choose: (id: string) => void): HTMLElement =>
  h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Programs"),
    session.programs === null
      ? h(
          "p",
          {},
          "This credential may not list programs (an OAuth access token acts in the programs of its grant): name the program above."
        )
      : pagedList<Program>({
          caption: "Programs",
          empty: "No programs.",
          load: (query) => session.api.get<Page<Program>>("/programs", query, "organization"),
          columns: [
            {
              title: "Program",
              cell: (program) => {
                const button = h("button", { type: "button", class: "link" }, program.name)
                button.addEventListener("click", () => choose(program.id))
                return button
              }
            },
            { title: "BIN", cell: (program) => program.bin },
            { title: "Id", cell: (program) => h("code", {}, program.id) },
            { title: "Created", cell: (program) => time(program.created_at) }
          ]
        })
  )

/** The view a route names. */
const viewFor = async (session: Session, route: string, rerender: () => void, choose: (id: string) => void): Promise<HTMLElement> => {
  const [, section = "", id] = route.split("/")
  if (section === "programs") return programsView(session, choose)
  if (session.programId === null) return h("p", { role: "alert" }, "Choose a program first.")
  const context: ViewContext = {
    api: session.api,
    programId: session.programId,
    sandbox: session.sandbox,
    navigate: (to) => {
      location.hash = `#${to}`
    },
    rerender
  }
  switch (section) {
    case "cards":
      return id === undefined ? cardsView(context) : cardView(context, id)
    case "transfers":
      return transfersView(context)
    case "api-keys":
      return apiKeysView(context)
    case "transactions":
      return id === undefined ? transactionsView(context) : transactionView(context, id)
    case "webhooks":
      return id === undefined ? webhooksView(context) : webhookView(context, id)
    case "events":
      return id === undefined ? eventsView(context) : eventView(context, id)
    case "wallets":
      return id === undefined ? walletsView(context) : walletView(context, id)
    case "cardholders":
      return cardholdersView(context)
    default:
      return walletsView(context)
  }
}

/** The signed-in console: header, navigation and the routed view. */
const start = (session: Session) => {
  const main = h("main", { id: "main", tabindex: "-1" })
  const nav = h("nav", { "aria-label": "Console" })
  const signOut = h("button", { type: "button" }, "Sign out")
  signOut.addEventListener("click", () => {
    forget()
    window.removeEventListener("hashchange", render)
    history.replaceState(null, "", location.pathname)
    signIn()
  })
  const header = h("header", {}, h("h1", {}, "Issuing console"), h("div", { id: "picker" }), signOut)
  const route = () => (location.hash.startsWith("#/") ? location.hash.slice(1) : "/wallets")
  let rendering = 0
  async function render() {
    const current = route()
    const ticket = ++rendering
    replace(header.querySelector("#picker")!, programPicker(session, render))
    replace(
      nav,
      h(
        "ul",
        {},
        ...NAV.map(([path, text]) => h("li", {}, link(path, text, undefined))).map((item, index) => {
          if (current.startsWith(NAV[index]![0])) item.firstElementChild!.setAttribute("aria-current", "page")
          return item
        })
      )
    )
    replace(main, h("p", { class: "muted", role: "status" }, "Loading…"))
    let view: HTMLElement
    try {
      view = await viewFor(session, current, render, (id) => {
        session.programId = id
        saveProgram(id)
        location.hash = "#/wallets"
      })
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        forget()
        signIn(error)
        return
      }
      view = h("section", {}, h("h2", { id: "view-title", tabindex: "-1" }, "Could not load this view"), errorBox(error))
    }
    if (ticket !== rendering) return
    replace(main, view)
    // Focus moves to the new view's heading, so keyboard and screen-reader users follow the navigation.
    ;(main.querySelector("#view-title") as HTMLElement | null)?.focus()
  }
  window.addEventListener("hashchange", render)
  // The fragment is the route, so the skip link moves focus itself instead of navigating to #main.
  const skip = h("a", { class: "skip", href: "#main" }, "Skip to content")
  skip.addEventListener("click", (event) => {
    event.preventDefault()
    main.focus()
  })
  replace(root, skip, header, nav, main)
  void render()
}

const boot = async () => {
  const credential = savedCredential()
  if (credential === null) return signIn()
  try {
    start(await open(credential))
  } catch (error) {
    forget()
    signIn(error)
  }
}

void boot()
