import { startCardDisplayServer } from "./server.js"

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value.trim() === "") {
    process.stderr.write(`card-display: set ${name}\n`)
    process.exit(78)
  }
  return value.trim()
}

const server = await startCardDisplayServer({
  issuingUrl: process.env.ISSUING_URL ?? "http://127.0.0.1:8080",
  apiKey: required("ISSUING_API_KEY"),
  programId: required("ISSUING_PROGRAM_ID"),
  cardId: required("CARD_ID"),
  port: Number(process.env.PORT ?? "3000")
})
process.stdout.write(`card-display: open ${server.url}\n`)
