/** Events: a search by type (the API's filter) and time (a bounded walk of the newest-first pages), and one event. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { fromLocalInput, time } from "../format.js"
import type { IssuingEvent, Subscription } from "../records.js"
import { actionButton, errorBox, fields, link, pagedList, table } from "../ui.js"
import type { ViewContext } from "./context.js"
import { attemptsList } from "./webhooks.js"

/** Pages of 100 one click of a time search reads at most, so a search over millions of events stays a bounded step. */
const PAGES_PER_STEP = 10

const eventColumns = [
  { title: "Event", cell: (event: IssuingEvent) => link(`/events/${event.id}`, event.type, `Event ${event.type} ${event.id}`) },
  { title: "Id", cell: (event: IssuingEvent) => h("code", {}, event.id) },
  { title: "Created", cell: (event: IssuingEvent) => time(event.created_at) }
]

/**
 * Events within a time window. GET /v1/events filters by type only, so the window is found by
 * walking its pages newest first with `starting_after`: events after `to` are passed over, the walk
 * stops at the first event before `from`, and each click reads at most PAGES_PER_STEP pages.
 */
const timeSearch = (context: ViewContext, type: string | undefined, from: number, to: number): HTMLElement => {
  const section = h("div", {})
  const found: Array<IssuingEvent> = []
  let cursor: string | undefined
  let scanned = 0
  let done = false
  const step = async () => {
    replace(section, h("p", { class: "muted", role: "status" }, "Searching…"))
    try {
      for (let pages = 0; pages < PAGES_PER_STEP && !done; pages++) {
        const page = await context.api.get<Page<IssuingEvent>>("/events", { type, page_size: 100, starting_after: cursor })
        scanned += page.data.length
        for (const event of page.data) {
          const at = Date.parse(event.created_at)
          if (at < from) {
            done = true
            break
          }
          if (at <= to) found.push(event)
        }
        cursor = page.data[page.data.length - 1]?.id
        if (page.data.length < 100) done = true
      }
    } catch (error) {
      replace(section, errorBox(error))
      return
    }
    const more = h("button", { type: "button" }, "Search further back")
    more.addEventListener("click", () => void step())
    replace(
      section,
      found.length === 0
        ? h("p", {}, "No events in this window so far.")
        : table(
            "Events in the window",
            eventColumns.map((column) => column.title),
            found.map((event) => eventColumns.map((column) => column.cell(event)))
          ),
      h(
        "p",
        { class: "muted", role: "status" },
        `${found.length} found among the ${scanned.toLocaleString("en-US")} newest events read. `,
        done ? "The whole window was read." : more
      )
    )
  }
  void step()
  return section
}

/** The search form and its results. */
export const eventsView = (context: ViewContext): HTMLElement => {
  const type = h("input", {
    id: "event-type",
    type: "text",
    placeholder: "e.g. card.updated",
    autocomplete: "off",
    "aria-describedby": "event-type-help"
  })
  const from = h("input", { id: "event-from", type: "datetime-local", step: "1" })
  const to = h("input", { id: "event-to", type: "datetime-local", step: "1" })
  const results = h("div", {})
  const search = () => {
    const typeValue = type.value.trim() === "" ? undefined : type.value.trim()
    const fromMs = fromLocalInput(from.value)
    const toMs = fromLocalInput(to.value)
    if (fromMs === undefined && toMs === undefined) {
      replace(
        results,
        pagedList<IssuingEvent>({
          caption: "Events",
          empty: "No events.",
          load: (query) => context.api.get<Page<IssuingEvent>>("/events", { ...query, type: typeValue }),
          columns: eventColumns
        })
      )
    } else {
      replace(
        results,
        timeSearch(
          context,
          typeValue,
          fromMs === undefined ? 0 : Date.parse(fromMs),
          toMs === undefined ? Number.POSITIVE_INFINITY : Date.parse(toMs)
        )
      )
    }
  }
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Search events" },
    h("label", { for: "event-type" }, "Type"),
    type,
    h("label", { for: "event-from" }, "From"),
    from,
    h("label", { for: "event-to" }, "To"),
    to,
    h("button", { type: "submit" }, "Search"),
    h("p", { id: "event-type-help", class: "muted" }, "An event type as the catalogue names it (/docs/events); times in your local time.")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    search()
  })
  search()
  return h("section", { "aria-labelledby": "view-title" }, h("h2", { id: "view-title", tabindex: "-1" }, "Events"), form, results)
}

/** One event, its attempts, and a resend to one of the program's subscriptions. */
export const eventView = async (context: ViewContext, eventId: string): Promise<HTMLElement> => {
  const event = await context.api.get<IssuingEvent>(`/events/${encodeURIComponent(eventId)}`)
  const status = h("div", { role: "status" })
  const subscriptions = await context.api.get<Page<Subscription>>("/webhook-subscriptions", { page_size: 100 })
  const target = h(
    "select",
    { id: "resend-target" },
    ...subscriptions.data.map((subscription) => h("option", { value: subscription.id }, subscription.url))
  )
  const attempts = h("div", {})
  const refresh = () => replace(attempts, attemptsList(context, { event_id: event.id }, status, refresh))
  refresh()
  const resend = actionButton("Resend", status, async () => {
    await context.api.write("POST", `/events/${event.id}/resend`, { subscription_id: target.value })
    replace(status, h("p", { class: "success" }, "Sent again."))
    refresh()
  })
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, `Event ${event.type}`),
    fields([
      ["Event", h("code", {}, event.id)],
      ["Type", event.type],
      ["Created", time(event.created_at)]
    ]),
    h("pre", { class: "json", tabindex: "0", "aria-label": "The event's object" }, JSON.stringify(event.data.object, null, 2)),
    subscriptions.data.length === 0
      ? null
      : h("div", { class: "actions" }, h("label", { for: "resend-target" }, "Resend to"), target, resend),
    status,
    h("h3", {}, "Attempts"),
    attempts
  )
}
