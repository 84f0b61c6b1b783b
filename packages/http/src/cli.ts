import * as fs from "node:fs"
import { Access } from "@issuing/core"
import { Effect, Either, HashMap, Logger, LogLevel, Option } from "effect"
import { createIssuing } from "./App.js"
import { cardsCommand } from "./commands/CardsCommand.js"
import { networkCommand } from "./commands/NetworkCommand.js"
import { vaultCommand } from "./commands/VaultCommand.js"
import { loadConfig, resolveVaultKeys, type ServerConfig } from "./config.js"
import { progress, type StepProgress } from "./Progress.js"
import { startServer } from "./server.js"
import { describeFailure } from "./StartupFailure.js"
import { telemetryFromEnv } from "./Telemetry.js"
import { connectionNotes, describeDatabase, type LoadedStore, loadStore, StorePackageMissing, storeFor } from "./Store.js"
import { workerCommand } from "./WorkerCommand.js"

const USAGE = `Usage: issuing <command>

Commands:
  serve                     Serve the HTTP API with the in-process webhook worker
  worker                    Run the webhook delivery worker only
  migrate                   Apply database migrations and exit
  orgs create --name NAME   Create an organization with a default program and an admin key
  vault reseal              Re-encrypt card data and webhook secrets under the current vault key (after rotation)
  cards reseal              Alias of vault reseal
  network send --iso8583 HOST:PORT --mti MTI ...
                            Send one ISO 8583 message to an authorization host and print the answer

Configuration is read from ISSUING_* environment variables (see README.md).`

/** The commands `main` runs itself. */
const BUILT_IN: Readonly<Record<string, true>> = { serve: true, migrate: true, orgs: true }

/** The commands that live in their own module, by name: a fixed table, like USAGE. */
const COMMANDS: Readonly<Record<string, (config: ServerConfig, args: ReadonlyArray<string>) => Promise<number>>> = {
  worker: workerCommand,
  vault: vaultCommand,
  cards: cardsCommand
}

const out = (line: string) => process.stdout.write(`${line}\n`)
const err = (line: string) => process.stderr.write(`${line}\n`)

/** The exit code of a command line that cannot be run as written (sysexits' EX_USAGE). */
export const EXIT_USAGE = 64

/** One line naming what was not understood, then the usage; exits EX_USAGE. */
const usageError = (problem: string) => {
  err(`issuing: ${problem}\n\n${USAGE}`)
  return EXIT_USAGE
}

/** The arguments each command takes after its name (and subcommand); anything else is a usage error. */
const noArguments = (command: string, args: ReadonlyArray<string>) =>
  args.length === 0 ? undefined : usageError(`${command} takes no ${args[0]!.startsWith("-") ? "option" : "argument"} '${args[0]}'`)

/**
 * Applies pending migrations with a progress step per migration on stderr. The Migrator announces
 * each one with a debug log ("Running migration", annotated with its id and name); that log is read
 * here and other logs of Info and above go to the default logger as before.
 */
const migrate = async (store: LoadedStore) => {
  const report = progress(process.stderr)
  let current: StepProgress | undefined
  const annotation = (annotations: HashMap.HashMap<string, unknown>, key: string) =>
    String(Option.getOrElse(HashMap.get(annotations, key), () => "?"))
  const logger = Logger.make<unknown, void>((options) => {
    const text = Array.isArray(options.message) ? options.message.join(" ") : String(options.message)
    if (text === "Running migration") {
      current?.finish(1)
      const id = annotation(options.annotations, "migration_id").padStart(4, "0")
      current = report.step(`migration ${id}_${annotation(options.annotations, "migration_name")}`, 1)
    } else if (LogLevel.greaterThanEqual(options.logLevel, LogLevel.Info)) {
      Logger.defaultLogger.log(options)
    }
  })
  const applied = await Effect.runPromise(
    store.migrate.pipe(Logger.withMinimumLogLevel(LogLevel.Debug), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  )
  current?.finish(1)
  return applied
}

const serve = async (config: ServerConfig) => {
  out(`issuing: ${config.settings.environment}, store ${describeDatabase(config.database)}`)
  for (const note of await connectionNotes(config.database)) out(`issuing: ${note}`)
  if (config.vaultKey.source === "file") {
    const generated = !fs.existsSync(config.vaultKey.path)
    out(
      `issuing: vault key ${generated ? "generated into" : "read from"} ${config.vaultKey.path} (sandbox; keep this file with the database, or set ISSUING_VAULT_KEY)`
    )
  }
  const telemetry = telemetryFromEnv(process.env)
  const server = await startServer(config, (line) => out(`issuing: ${line}`), { telemetry })
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    out(`issuing: ${signal} received, shutting down`)
    server.close().then(
      () => process.exit(0),
      (error) => {
        err(`issuing: shutdown failed: ${String(error)}`)
        process.exit(1)
      }
    )
  }
  // Handlers first: a supervisor may signal as soon as it reads the "listening" line.
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))
  if (telemetry !== undefined) out("issuing: OpenTelemetry traces and metrics on (OTEL_EXPORTER_OTLP_* variables)")
  out(`issuing: listening on ${server.url} (public base URL ${server.instance.settings.baseUrl})`)
  return new Promise<number>(() => {})
}

const createOrganization = async (config: ServerConfig, args: ReadonlyArray<string>) => {
  // `--name NAME` or `--name=NAME`, and nothing else.
  let name: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--name" && i + 1 < args.length) name = args[++i]
    else if (arg.startsWith("--name=")) name = arg.slice("--name=".length)
    else if (arg !== "--name") return usageError(`orgs create does not take '${arg}'`)
  }
  if (name === undefined || name.trim() === "") return usageError("orgs create needs --name NAME")
  const instance = await createIssuing({
    store: storeFor(config.database),
    vaultKeys: resolveVaultKeys(config),
    settings: config.settings,
    // A one-shot command: no background work, and stdout is its result.
    background: false,
    log: null
  })
  try {
    const created = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization(name.trim())))
    out(JSON.stringify(created))
    return 0
  } finally {
    await instance.dispose()
  }
}

/**
 * Whether the words after a known command are what it takes (checked before any configuration is
 * read or database opened): a usage error's exit code, or undefined.
 */
const usageProblem = (command: string, rest: ReadonlyArray<string>): number | undefined => {
  switch (command) {
    case "serve":
    case "worker":
    case "migrate":
      return noArguments(command, rest)
    case "orgs":
      if (rest[0] !== "create")
        return usageError(rest[0] === undefined ? "orgs needs a subcommand: orgs create --name NAME" : `unknown orgs command '${rest[0]}'`)
      return undefined // its options are read by createOrganization
    default:
      // vault and cards: one subcommand, reseal, and nothing after it.
      if (rest[0] !== "reseal")
        return usageError(
          rest[0] === undefined ? `${command} needs a subcommand: ${command} reseal` : `unknown ${command} command '${rest[0]}'`
        )
      return noArguments(`${command} reseal`, rest.slice(1))
  }
}

/** Runs the CLI; resolves to the exit code. */
export const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const [command, ...rest] = argv
  if (command === "help" || command === "--help" || command === "-h") {
    out(USAGE)
    return 0
  }
  if (command === undefined) return usageError("a command is needed")
  // A client of a running host: no configuration, no database.
  if (command === "network") return networkCommand(rest, out, err)
  if (!Object.hasOwn(BUILT_IN, command) && !Object.hasOwn(COMMANDS, command)) {
    return usageError(command.startsWith("-") ? `unknown option '${command}'` : `unknown command '${command}'`)
  }
  const misuse = usageProblem(command, rest)
  if (misuse !== undefined) return misuse
  const loaded = loadConfig(process.env)
  if (Either.isLeft(loaded)) {
    err(`issuing: ${loaded.left}`)
    return 78
  }
  const config = loaded.right
  if (Object.hasOwn(BUILT_IN, command) || Object.hasOwn(COMMANDS, command)) {
    // Load the store package ISSUING_DATABASE_URL names before anything starts: a host that
    // installed only the other store gets one line saying what to install, like any bad setting.
    const problem = await loadStore(config.database).then(
      () => undefined,
      (error) => error
    )
    if (problem instanceof StorePackageMissing) {
      const kind = problem.kind === "sqlite" ? "a SQLite" : "a PostgreSQL"
      err(
        `issuing: ISSUING_DATABASE_URL names ${kind} database, which needs ${problem.packageName}: install it (npm install ${problem.packageName})`
      )
      return 78
    }
  }
  try {
    switch (command) {
      case "serve":
        return await serve(config)
      case "migrate": {
        const applied = await migrate(await loadStore(config.database))
        out(
          `issuing: ${applied.length === 0 ? "no pending migrations" : `applied ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`}`
        )
        return 0
      }
      case "orgs":
        return await createOrganization(config, rest.slice(1))
      default:
        return await COMMANDS[command]!(config, rest)
    }
  } catch (error) {
    err(`issuing: ${command} failed: ${describeFailure(error, config.database)}`)
    return 1
  }
}
