// Host page script. It never reads the card frame (rule 5): it only asks this app's own backend
// for an embed session and points an iframe at the platform's embed_url (rule 1).
;(() => {
  var show = document.getElementById("show")
  var slot = document.getElementById("slot")
  var message = document.getElementById("message")
  var expiryTimer = null

  function closeDisplay(text) {
    if (expiryTimer !== null) window.clearTimeout(expiryTimer)
    expiryTimer = null
    slot.replaceChildren()
    message.textContent = text
    show.disabled = false
  }

  // Rule 6: every opening creates a new session; an expired token is never reused.
  show.addEventListener("click", () => {
    show.disabled = true
    message.textContent = "Loading card details…"
    fetch("/api/card-sessions", { method: "POST" })
      .then((response) =>
        response.json().then((body) => {
          if (!response.ok) throw new Error(body.error || "The card display is unavailable.")
          return body
        })
      )
      .then((session) => {
        var frame = document.createElement("iframe")
        // Rule 2: scripts only (no allow-same-origin), no referrer.
        frame.setAttribute("sandbox", "allow-scripts")
        frame.setAttribute("referrerpolicy", "no-referrer")
        frame.setAttribute("title", "Card details")
        frame.setAttribute("src", session.embed_url)
        slot.replaceChildren(frame)
        message.textContent = ""
        show.disabled = false
        show.textContent = "Show card details again"
        var remainingMs = Date.parse(session.expires_at) - Date.now()
        expiryTimer = window.setTimeout(
          () => {
            closeDisplay("The card display timed out. Show it again to continue.")
          },
          Math.max(0, remainingMs)
        )
      })
      .catch((error) => {
        closeDisplay(error.message)
      })
  })
})()
