import { main } from "./cli.js"

/** Entry point of the `issuing` command. */
main(process.argv.slice(2)).then((code) => process.exit(code))
