import { sha256 } from "./EmbedDocument.js"

/**
 * The endpoint portal page (docs/webhooks.md#the-endpoint-portal): one self-contained HTML document
 * in which a program's customer lists, adds, edits, disables and deletes its webhook endpoints,
 * sends a test event, sees each endpoint's attempts, replays a window and resends an event. Like
 * the card display it loads nothing: its one style and one script are inline and allowed by their
 * SHA-256 hashes. Its calls go to the portal routes of its own origin with the session token as a
 * bearer token (read from the page's URL); no API key is ever in the page.
 */

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font: 14px/1.45 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #0f172a; background: #fff; }
main { padding: 16px; max-width: 960px; }
h1 { font-size: 18px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 18px 0 8px; }
p.hint { margin: 0 0 12px; color: #475569; font-size: 13px; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #e2e8f0; vertical-align: top; font-size: 13px; }
th { font-size: 11px; letter-spacing: .05em; text-transform: uppercase; color: #64748b; }
td.url { word-break: break-all; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
button { font: inherit; font-size: 12px; font-weight: 600; padding: 5px 10px; border-radius: 6px; cursor: pointer; border: 1px solid #cbd5e1; background: #f8fafc; color: #0f172a; margin: 0 4px 4px 0; }
button:hover { background: #f1f5f9; }
button.primary { background: #1d4ed8; border-color: #1d4ed8; color: #fff; }
button.danger { color: #b91c1c; }
button:focus-visible, input:focus-visible { outline: 2px solid #2563eb; outline-offset: 2px; }
fieldset { border: 1px solid #e2e8f0; border-radius: 8px; padding: 10px 12px; margin: 8px 0; }
legend { font-weight: 600; padding: 0 4px; }
label { display: block; margin: 6px 0 2px; font-size: 12px; color: #334155; }
input[type=url], input[type=text] { width: 100%; padding: 6px 8px; border: 1px solid #cbd5e1; border-radius: 6px; font: inherit; }
.types label { display: inline-flex; align-items: center; gap: 4px; margin: 2px 12px 2px 0; font-family: ui-monospace, monospace; }
.status-SUCCESS { color: #15803d; font-weight: 600; }
.status-FAILED { color: #b91c1c; font-weight: 600; }
.badge { display: inline-block; font-size: 11px; padding: 1px 6px; border-radius: 10px; background: #e2e8f0; }
.badge.off { background: #fee2e2; color: #991b1b; }
.secret { margin: 8px 0; padding: 8px 10px; border: 1px solid #f59e0b; background: #fffbeb; border-radius: 6px; word-break: break-all; }
.secret code { font-family: ui-monospace, monospace; }
#status { min-height: 1.4em; margin: 8px 0; color: #334155; }
#status.error { color: #b91c1c; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; max-height: 6em; overflow: auto; font-size: 12px; }
`.trim()

const SCRIPT = `
(function () {
  "use strict";
  var root = document.getElementById("portal");
  var allowed = JSON.parse(root.getAttribute("data-allowed-event-types"));
  var token = new URLSearchParams(window.location.search).get("session_token") || "";
  var base = window.location.pathname.replace(/\\/$/, "");
  var statusLine = document.getElementById("status");
  var list = document.getElementById("endpoints");
  var detail = document.getElementById("detail");
  var form = document.getElementById("endpoint-form");
  var editing = null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "onclick") node.addEventListener("click", attrs[key]);
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }
  function say(text, isError) {
    statusLine.textContent = text;
    statusLine.className = isError ? "error" : "";
  }
  function call(method, path, body) {
    var init = { method: method, headers: { authorization: "Bearer " + token }, cache: "no-store", referrerPolicy: "no-referrer" };
    if (body !== undefined) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(base + path, init).then(function (response) {
      return response.text().then(function (text) {
        var data = text === "" ? null : JSON.parse(text);
        if (!response.ok) {
          var error = data && data.error ? data.error : { message: "HTTP " + response.status };
          if (response.status === 401) error.message = "This portal link has expired. Ask for a new one.";
          throw new Error(error.message + (error.param ? " (" + error.param + ")" : ""));
        }
        return data;
      });
    });
  }
  function failed(error) { say(error.message, true); }
  function showSecret(subscription) {
    var box = document.getElementById("secret");
    box.textContent = "";
    box.appendChild(el("strong", { text: "Signing secret of " + subscription.url + " (shown once, keep it now): " }));
    box.appendChild(el("code", { text: subscription.secret }));
    box.hidden = false;
  }
  function typeBoxes(selected) {
    var holder = document.getElementById("types");
    holder.textContent = "";
    allowed.forEach(function (type) {
      var box = el("input", { type: "checkbox", value: type, name: "event_types" });
      box.checked = selected.indexOf(type) >= 0;
      holder.appendChild(el("label", {}, [box, document.createTextNode(type)]));
    });
  }
  function resetForm() {
    editing = null;
    document.getElementById("url").value = "";
    document.getElementById("description").value = "";
    document.getElementById("disabled").checked = false;
    document.getElementById("form-legend").textContent = "Add an endpoint";
    document.getElementById("save").textContent = "Add endpoint";
    document.getElementById("cancel").hidden = true;
    typeBoxes([]);
  }
  function edit(subscription) {
    editing = subscription.id;
    document.getElementById("url").value = subscription.url;
    document.getElementById("description").value = subscription.description;
    document.getElementById("disabled").checked = subscription.disabled;
    document.getElementById("form-legend").textContent = "Edit " + subscription.url;
    document.getElementById("save").textContent = "Save changes";
    document.getElementById("cancel").hidden = false;
    typeBoxes(subscription.event_types);
    document.getElementById("url").focus();
  }
  function load() {
    return call("GET", "/subscriptions?page_size=100").then(function (page) {
      list.textContent = "";
      if (page.data.length === 0) {
        list.appendChild(el("tr", {}, [el("td", { colspan: "4", text: "No endpoints yet." })]));
      }
      page.data.forEach(function (subscription) {
        var state = el("span", { class: subscription.disabled ? "badge off" : "badge", text: subscription.disabled ? "disabled" : "enabled" });
        list.appendChild(el("tr", { "data-id": subscription.id }, [
          el("td", { class: "url", text: subscription.url }),
          el("td", { text: subscription.event_types.join(", ") }),
          el("td", {}, [state]),
          el("td", {}, [
            el("button", { type: "button", text: "Attempts", onclick: function () { attempts(subscription); } }),
            el("button", { type: "button", text: "Send test event", onclick: function () { sendTest(subscription); } }),
            el("button", { type: "button", text: "Edit", onclick: function () { edit(subscription); } }),
            el("button", { type: "button", text: subscription.disabled ? "Enable" : "Disable", onclick: function () { toggle(subscription); } }),
            el("button", { type: "button", text: "Rotate secret", onclick: function () { rotate(subscription); } }),
            el("button", { type: "button", class: "danger", text: "Delete", onclick: function () { remove(subscription); } })
          ])
        ]));
      });
      return page;
    });
  }
  function attempts(subscription) {
    return call("GET", "/attempts?webhook_subscription_id=" + encodeURIComponent(subscription.id)).then(function (page) {
      detail.textContent = "";
      detail.appendChild(el("h2", { text: "Attempts of " + subscription.url + " (" + page.total_count + ")" }));
      var begin = el("input", { type: "text", id: "replay-begin", value: new Date(Date.now() - 86400000).toISOString() });
      var end = el("input", { type: "text", id: "replay-end", value: new Date().toISOString() });
      detail.appendChild(el("fieldset", {}, [
        el("legend", { text: "Replay a window" }),
        el("label", { for: "replay-begin", text: "From (RFC 3339)" }), begin,
        el("label", { for: "replay-end", text: "To (RFC 3339)" }), end,
        el("p", {}, [el("button", { type: "button", text: "Replay", onclick: function () {
          call("POST", "/subscriptions/" + subscription.id + "/replay", { begin: begin.value, end: end.value })
            .then(function (result) { say("Replay queued " + result.events_queued + " event(s) for " + subscription.url + "."); }, failed);
        } })])
      ]));
      var rows = page.data.map(function (attempt) {
        return el("tr", { class: "attempt" }, [
          el("td", { text: attempt.attempted_at }),
          el("td", { class: "status-" + attempt.status, text: attempt.status }),
          el("td", { text: String(attempt.response_code) }),
          el("td", {}, [el("pre", { text: attempt.response_body })]),
          el("td", { text: attempt.event_id }),
          el("td", {}, [el("button", { type: "button", text: "Resend", onclick: function () {
            call("POST", "/events/" + attempt.event_id + "/resend", { subscription_id: subscription.id })
              .then(function () { say("Event resent."); return attempts(subscription); }, failed);
          } })])
        ]);
      });
      detail.appendChild(el("table", { id: "attempts" }, [
        el("thead", {}, [el("tr", {}, ["When", "Status", "Code", "Body", "Event", ""].map(function (name) { return el("th", { text: name }); }))]),
        el("tbody", {}, rows)
      ]));
    }, failed);
  }
  function sendTest(subscription) {
    say("Sending a test event to " + subscription.url + "…");
    return call("POST", "/subscriptions/" + subscription.id + "/test").then(function (attempt) {
      say("Test event sent: " + attempt.status + " (" + attempt.response_code + ").");
      return attempts(subscription);
    }, failed);
  }
  function toggle(subscription) {
    return call("PATCH", "/subscriptions/" + subscription.id, { disabled: !subscription.disabled }).then(load, failed);
  }
  function rotate(subscription) {
    return call("POST", "/subscriptions/" + subscription.id + "/rotate-secret").then(function (rotated) { showSecret(rotated); }, failed);
  }
  function remove(subscription) {
    return call("DELETE", "/subscriptions/" + subscription.id).then(function () {
      say("Deleted " + subscription.url + ".");
      detail.textContent = "";
      return load();
    }, failed);
  }
  // A sandboxed document cannot submit forms (no allow-forms): the button saves through fetch.
  document.getElementById("save").addEventListener("click", function () {
    var types = Array.prototype.map.call(form.querySelectorAll("input[name=event_types]:checked"), function (box) { return box.value; });
    var body = {
      url: document.getElementById("url").value,
      description: document.getElementById("description").value,
      event_types: types,
      disabled: document.getElementById("disabled").checked
    };
    var done = editing === null
      ? call("POST", "/subscriptions", body).then(function (created) { showSecret(created); say("Endpoint added."); })
      : call("PATCH", "/subscriptions/" + editing, body).then(function () { say("Endpoint saved."); });
    done.then(function () { resetForm(); return load(); }, failed);
  });
  document.getElementById("cancel").addEventListener("click", resetForm);
  resetForm();
  load().then(function () { say(""); }, failed);
})();
`.trim()

/**
 * The portal's Content-Security-Policy: nothing loads from anywhere; only the page's own inline
 * style and script run (by hash); it may call its own origin only; no forms are submitted, no base
 * URL set. Any page may frame it (`frame-ancestors *`): the token in its URL is the credential and
 * the platform does not know its programs' sites. The CSP sandbox keeps its origin (its calls are
 * same-origin, no CORS) but forbids popups, top-level navigation and form submission (the page
 * saves with fetch from a button, never a form).
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors *",
  "sandbox allow-scripts allow-same-origin"
].join("; ")

/** Headers of the portal page: its policy, and nothing cached, referred or sniffed. */
export const PORTAL_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PORTAL_CSP,
  "cache-control": "no-store",
  pragma: "no-cache",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-robots-tag": "noindex, nofollow"
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** The HTML of the portal for a session: its allowed event types are the page's only data. */
export const portalDocument = (session: { readonly allowed_event_types: ReadonlyArray<string> }): string =>
  [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="referrer" content="no-referrer">`,
    `<title>Webhook endpoints</title>`,
    `<style>${STYLE}</style></head>`,
    `<body><main id="portal" data-allowed-event-types="${escapeHtml(JSON.stringify(session.allowed_event_types))}">`,
    `<h1>Webhook endpoints</h1>`,
    `<p class="hint">Endpoints receive signed events (Standard Webhooks). A signing secret is shown once, when the endpoint is added or its secret rotated.</p>`,
    `<p id="status" role="status" aria-live="polite"></p>`,
    `<div id="secret" class="secret" hidden></div>`,
    `<table><thead><tr><th>URL</th><th>Event types</th><th>State</th><th>Actions</th></tr></thead><tbody id="endpoints"></tbody></table>`,
    `<section id="detail" aria-live="polite"></section>`,
    `<div id="endpoint-form"><fieldset><legend id="form-legend">Add an endpoint</legend>`,
    `<label for="url">Endpoint URL</label><input type="url" id="url" name="url" required placeholder="https://example.com/webhooks">`,
    `<label for="description">Description</label><input type="text" id="description" name="description" maxlength="500">`,
    `<label>Event types</label><div class="types" id="types"></div>`,
    `<label><input type="checkbox" id="disabled" name="disabled"> Disabled</label>`,
    `<p><button type="button" class="primary" id="save">Add endpoint</button><button type="button" id="cancel" hidden>Cancel</button></p>`,
    `</fieldset></div>`,
    `</main><script>${SCRIPT}</script></body></html>`
  ].join("")
