/** Webhook subscriptions: the list, and one subscription with its attempts, replay, resend, secret rotation and test event. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { fromLocalInput, time, toLocalInput, shortId } from "../format.js"
import type { Attempt, Subscription } from "../records.js"
import { actionButton, actionForm, badge, confirmButton, errorBox, fields, input, link, pagedList } from "../ui.js"
import type { ViewContext } from "./context.js"

/** A signing secret, shown once: with the advice to keep it now. */
const secretShown = (secret: string, what: string): HTMLElement =>
  h(
    "div",
    { class: "success", role: "status" },
    h("p", {}, `${what} Its signing secret, shown this once:`),
    h("code", { class: "secret" }, secret)
  )

/** Subscribes an endpoint to event types (POST /v1/webhook-subscriptions); shows its secret once. */
const newSubscriptionForm = (context: ViewContext): HTMLElement => {
  const url = input("subscription-url", { type: "url", required: true, autocomplete: "off" })
  const types = input("subscription-types", { required: true, placeholder: "transaction.updated, card.updated", autocomplete: "off" })
  const description = input("subscription-description", { maxlength: "500", autocomplete: "off" })
  return actionForm({
    id: "new-subscription",
    title: "New webhook subscription",
    fields: [
      ["Endpoint URL", url, "The URL that receives the events (https in production)."],
      ["Event types", types, "Separated by commas (the event types are listed in docs/webhooks.md and at /docs/events)."],
      ["Description (optional)", description]
    ],
    submit: "Create subscription",
    run: async () => {
      const created = await context.api.write<Subscription & { secret: string }>("POST", "/webhook-subscriptions", {
        url: url.value.trim(),
        event_types: types.value
          .split(",")
          .map((type) => type.trim())
          .filter((type) => type !== ""),
        ...(description.value.trim() === "" ? {} : { description: description.value.trim() })
      })
      return h(
        "div",
        {},
        secretShown(created.secret, "Subscription created."),
        h("p", {}, link(`/webhooks/${created.id}`, "Open the subscription"))
      )
    }
  })
}

/** The program's subscriptions. */
export const webhooksView = (context: ViewContext): HTMLElement =>
  h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Webhook subscriptions"),
    pagedList<Subscription>({
      caption: "Webhook subscriptions",
      empty: "No webhook subscriptions.",
      load: (query) => context.api.get<Page<Subscription>>("/webhook-subscriptions", query),
      columns: [
        {
          title: "Endpoint",
          cell: (subscription) => link(`/webhooks/${subscription.id}`, subscription.url, `Subscription ${subscription.url}`)
        },
        { title: "Events", cell: (subscription) => subscription.event_types.join(", ") },
        { title: "State", cell: (subscription) => badge(subscription.disabled ? "DISABLED" : "ENABLED") },
        { title: "Created", cell: (subscription) => time(subscription.created_at) }
      ]
    }),
    newSubscriptionForm(context)
  )

/** Attempts of a subscription (or of an event), newest first, each with its outcome and a resend. */
export const attemptsList = (
  context: ViewContext,
  filter: { webhook_subscription_id?: string; event_id?: string },
  status: HTMLElement,
  after: () => void
) =>
  pagedList<Attempt>({
    caption: "Delivery attempts",
    empty: "No attempts yet.",
    load: (query) => context.api.get<Page<Attempt>>("/webhook-attempts", { ...query, ...filter }),
    columns: [
      { title: "Attempted", cell: (attempt) => time(attempt.attempted_at) },
      { title: "Status", cell: (attempt) => badge(attempt.status) },
      { title: "Code", cell: (attempt) => (attempt.response_code === 0 ? "no answer" : String(attempt.response_code)) },
      { title: "Event", cell: (attempt) => link(`/events/${attempt.event_id}`, shortId(attempt.event_id), `Event ${attempt.event_id}`) },
      {
        title: "Response body",
        cell: (attempt) =>
          attempt.response_body === ""
            ? h("span", { class: "muted" }, "empty")
            : attempt.response_body.length <= 60
              ? h("code", {}, attempt.response_body)
              : h("details", {}, h("summary", {}, `${attempt.response_body.length} characters`), h("pre", {}, attempt.response_body))
      },
      {
        title: "Resend",
        cell: (attempt) =>
          actionButton(
            "Resend",
            status,
            async () => {
              await context.api.write("POST", `/events/${attempt.event_id}/resend`, { subscription_id: attempt.webhook_subscription_id })
              replace(status, h("p", { class: "success" }, `Event ${shortId(attempt.event_id)} sent again.`))
              after()
            },
            { "aria-label": `Resend event ${attempt.event_id}` }
          )
      }
    ]
  })

/** The replay form: every event of the window queued again for this subscription (docs/webhooks.md#replay). */
const replayForm = (context: ViewContext, subscription: Subscription, status: HTMLElement, after: () => void): HTMLElement => {
  const now = new Date()
  const begin = h("input", {
    id: "replay-begin",
    type: "datetime-local",
    step: "1",
    value: toLocalInput(new Date(now.getTime() - 3_600_000)),
    required: true
  })
  const end = h("input", {
    id: "replay-end",
    type: "datetime-local",
    step: "1",
    value: toLocalInput(new Date(now.getTime() + 60_000)),
    required: true
  })
  const submit = h("button", { type: "submit", disabled: subscription.disabled }, "Replay window")
  const form = h(
    "form",
    { class: "replay", "aria-labelledby": "replay-heading" },
    h("h3", { id: "replay-heading" }, "Replay"),
    h("p", { class: "muted" }, "Queues every event of the window (both ends included, at most 31 days) for this endpoint again."),
    h("label", { for: "replay-begin" }, "From (your local time)"),
    begin,
    h("label", { for: "replay-end" }, "To (your local time)"),
    end,
    submit
  )
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    submit.disabled = true
    try {
      const replay = await context.api.write<{ events_queued: number }>("POST", `/webhook-subscriptions/${subscription.id}/replay`, {
        begin: fromLocalInput(begin.value) ?? begin.value,
        end: fromLocalInput(end.value) ?? end.value
      })
      replace(
        status,
        h("p", { class: "success", "data-replayed": String(replay.events_queued) }, `${replay.events_queued} events queued for delivery.`)
      )
      after()
    } catch (error) {
      replace(status, errorBox(error))
    } finally {
      submit.disabled = subscription.disabled
    }
  })
  return form
}

/** One subscription. */
export const webhookView = async (context: ViewContext, subscriptionId: string): Promise<HTMLElement> => {
  const subscription = await context.api.get<Subscription>(`/webhook-subscriptions/${encodeURIComponent(subscriptionId)}`)
  const status = h("div", { role: "status" })
  const attempts = h("div", {})
  const refresh = () => replace(attempts, attemptsList(context, { webhook_subscription_id: subscription.id }, status, refresh))
  refresh()
  const refreshButton = h("button", { type: "button" }, "Refresh attempts")
  refreshButton.addEventListener("click", refresh)
  const rotate = actionButton("Rotate secret", status, async () => {
    const rotated = await context.api.write<{ secret: string }>("POST", `/webhook-subscriptions/${subscription.id}/rotate-secret`)
    replace(status, secretShown(rotated.secret, "Secret rotated (the old one keeps signing for a while, docs/webhooks.md)."))
  })
  // Disable stops deliveries and keeps the subscription; enable resumes them.
  const toggle = actionButton(
    subscription.disabled ? "Enable" : "Disable",
    status,
    async () => {
      await context.api.write<Subscription>("PATCH", `/webhook-subscriptions/${subscription.id}`, { disabled: !subscription.disabled })
      context.rerender()
    },
    { "data-action": subscription.disabled ? "enable" : "disable" }
  )
  const remove = confirmButton(
    "Delete",
    "Deleting stops every delivery to this endpoint for good.",
    status,
    async () => {
      await context.api.write("DELETE", `/webhook-subscriptions/${subscription.id}`)
      context.navigate("/webhooks")
    },
    { "data-action": "delete" }
  )
  const test = actionButton(
    "Send test event",
    status,
    async () => {
      const attempt = await context.api.write<Attempt>("POST", `/webhook-subscriptions/${subscription.id}/test`)
      replace(
        status,
        h(
          "p",
          { class: attempt.status === "SUCCESS" ? "success" : "warning" },
          `Test event: ${attempt.status}, response ${attempt.response_code || "none"}.`
        )
      )
      refresh()
    },
    { "data-action": "test" }
  )
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Webhook subscription ", badge(subscription.disabled ? "DISABLED" : "ENABLED")),
    fields([
      ["Subscription", h("code", {}, subscription.id)],
      ["Endpoint", subscription.url],
      ["Description", subscription.description ?? "—"],
      ["Event types", subscription.event_types.join(", ")],
      ["Created", time(subscription.created_at)]
    ]),
    h("div", { class: "actions", role: "group", "aria-label": "Subscription actions" }, rotate, test, refreshButton, toggle, remove),
    status,
    replayForm(context, subscription, status, refresh),
    h("h3", {}, "Attempts"),
    attempts
  )
}
