const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * The page GET /oauth/authorize shows when the client or its redirect_uri cannot be trusted: the
 * browser is never sent anywhere then (RFC 6749 §4.1.2.1). The message never repeats what was sent.
 */
export const oauthErrorPage = (message: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorization request refused</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:640px;margin:3rem auto;padding:0 1rem;color:#1a1a1a}</style>
</head><body><h1>Authorization request refused</h1><p>${escapeHtml(message)}</p>
<p>The application that sent you here is misconfigured. Nothing was shared with it.</p></body></html>`
