import type { CardDisplay } from "@issuing/core"
import * as crypto from "node:crypto"

/**
 * The embed document (docs/card-data.md#embed-sessions-and-the-embed-document): a self-contained
 * HTML page showing number, expiry and code, with copy controls, meant for an iframe with
 * sandbox="allow-scripts". It loads nothing: its one style and one script are inline and allowed by
 * their SHA-256 hashes, so no other script or style can run in it.
 */

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font: 15px/1.4 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: #0f172a; background: #ffffff; }
main { padding: 14px 16px; min-width: 300px; }
.field { display: flex; align-items: center; justify-content: space-between; gap: 12px; padding: 8px 0;
  border-bottom: 1px solid #e2e8f0; }
.field:last-of-type { border-bottom: 0; }
.label { display: block; font-size: 11px; letter-spacing: .06em; text-transform: uppercase; color: #64748b; }
.value { display: block; font: 600 18px/1.3 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: nowrap; user-select: all; -webkit-user-select: all; }
button { flex: none; font-family: inherit; font-size: 12px; font-weight: 600; line-height: 1; padding: 7px 12px; border-radius: 6px; cursor: pointer;
  border: 1px solid #cbd5e1; background: #f8fafc; color: #0f172a; }
button:hover { background: #f1f5f9; }
button:focus-visible { outline: 2px solid #2563eb; outline-offset: 2px; }
button.done { border-color: #16a34a; color: #15803d; }
.status { min-height: 1.4em; margin: 6px 0 0; font-size: 12px; color: #475569; }
`.trim()

const SCRIPT = `
(function () {
  "use strict";
  var pending = null;
  var status = document.getElementById("status");
  // navigator.clipboard is not available in an opaque-origin sandboxed frame, so copy through a
  // user-activated execCommand("copy") and put the raw value on the clipboard in the copy event.
  document.addEventListener("copy", function (event) {
    if (pending === null || !event.clipboardData) return;
    event.clipboardData.setData("text/plain", pending);
    event.preventDefault();
  });
  function copyValue(element) {
    var selection = window.getSelection();
    var range = document.createRange();
    range.selectNodeContents(element);
    selection.removeAllRanges();
    selection.addRange(range);
    pending = element.getAttribute("data-copy");
    var copied = false;
    try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
    pending = null;
    selection.removeAllRanges();
    return copied;
  }
  var buttons = document.querySelectorAll("button[data-target]");
  Array.prototype.forEach.call(buttons, function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-target"));
      var name = button.getAttribute("data-name");
      var copied = copyValue(target);
      button.textContent = copied ? "Copied" : "Copy";
      button.className = copied ? "done" : "";
      status.textContent = copied ? name + " copied to the clipboard." : "Copy is not available here: select the value to copy it.";
      window.setTimeout(function () { button.textContent = "Copy"; button.className = ""; status.textContent = ""; }, 2500);
    });
  });
})();
`.trim()

/** A CSP source allowing one inline script or style by its SHA-256 (shared by the portal's page). */
export const sha256 = (text: string) => `'sha256-${crypto.createHash("sha256").update(text, "utf8").digest("base64")}'`

/**
 * The document's Content-Security-Policy: nothing may load; only this page's own inline style and
 * script run (by hash); no forms, no base URL; and the page is sandboxed even if opened outside an
 * iframe, so it never runs with the platform's origin.
 */
export const EMBED_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "sandbox allow-scripts"
].join("; ")

/** Headers of the embed document: its policy, and nothing cached, referred or sniffed. */
export const EMBED_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": EMBED_CSP,
  "cache-control": "no-store",
  pragma: "no-cache",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-robots-tag": "noindex, nofollow"
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const groupDigits = (pan: string) => pan.replace(/(\d{4})(?=\d)/g, "$1 ")

/** The HTML of the embed document for one card. */
export const embedDocument = (card: CardDisplay): string => {
  const expiry = `${String(card.exp_month).padStart(2, "0")}/${String(card.exp_year % 100).padStart(2, "0")}`
  const field = (id: string, label: string, shown: string, copied: string) =>
    `<div class="field"><div><span class="label" id="${id}-label">${label}</span>` +
    `<span class="value" id="${id}" data-copy="${escapeHtml(copied)}" aria-labelledby="${id}-label">${escapeHtml(shown)}</span></div>` +
    `<button type="button" data-target="${id}" data-name="${label}" aria-label="Copy ${label.toLowerCase()}">Copy</button></div>`
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="referrer" content="no-referrer">`,
    `<title>Card details</title>`,
    `<style>${STYLE}</style></head>`,
    `<body><main aria-label="Card details">`,
    field("pan", "Card number", groupDigits(card.pan), card.pan),
    field("expiry", "Expiry", expiry, expiry),
    field("cvv", "Security code", card.cvv, card.cvv),
    `<p class="status" id="status" role="status" aria-live="polite"></p>`,
    `</main><script>${SCRIPT}</script></body></html>`
  ].join("")
}
