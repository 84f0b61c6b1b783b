import type { OpenApi } from "@effect/platform"

/**
 * What the OpenAPI document says beyond what HttpApi derives, so that client generators
 * (openapi-typescript + openapi-fetch, orval, @hey-api/openapi-ts) produce clients that compile and
 * call the server as it answers (docs/api.md#openapi). Each step is a rule the server already
 * follows; the document only states it.
 */

/** Camel-case and dashed spellings the server also accepts, each beside its canonical snake_case field. */
export const ALIASES: Readonly<Record<string, string>> = {
  paymentRail: "payment_rail",
  allowedMccCodes: "allowed_mcc_codes",
  blockedMccCodes: "blocked_mcc_codes",
  spendingPeriod: "spending_period",
  spendingLimits: "spending_limits",
  allowedMerchantCountries: "allowed_merchant_countries",
  blockedMerchantCountries: "blocked_merchant_countries",
  "page-size": "page_size",
  "order-by": "order_by"
}

/** Paging parameters and their real types (docs/api.md#paging); the server reads them leniently, as that page says. */
const PAGING: Readonly<Record<string, { readonly schema: object; readonly description: string }>> = {
  page: { schema: { type: "integer", minimum: 1, default: 1 }, description: "1-based page number (default 1)." },
  page_size: {
    schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
    description: "Items per page, 1 to 100 (default 10; above 100 is capped). Also accepted as `page-size`."
  },
  order_by: {
    schema: { type: "string" },
    description: "The field to order by, one of the list's order fields (400 listing them otherwise). Also accepted as `order-by`."
  },
  ascending: {
    schema: { type: "boolean", default: true },
    description: "With `order_by`: true for ascending (default), false for descending. Without `order_by` lists are newest first."
  },
  starting_after: {
    schema: { type: "string", format: "uuid" },
    description: "The id of the last item of the previous page, in the same order and filters: the page that follows it."
  }
}

/** Filters whose meaning is not "the items whose field is this value", by list path and parameter. */
const FILTER_DESCRIPTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "/v1/transfers": { financial_account_id: "Only the transfers with this financial account on either side (debited or credited)." },
  "/v1/financial-accounts/{financial_account_id}/book-transfers": {
    book: "Only the book transfers with an entry in this book of the account (principal or cash)."
  }
}

/**
 * The description of a parameter that has none of its own: a path id names its resource, a list's
 * query parameter filters it. Any other parameter is described where the API declares it.
 */
const parameterDescription = (path: string, parameter: any, isList: boolean): string | undefined => {
  if (parameter.in === "path" && parameter.name.endsWith("_id")) {
    return `The id of the ${parameter.name.slice(0, -3).replaceAll("_", " ")} (404 when the key cannot see it).`
  }
  if (parameter.in === "query" && isList) {
    return FILTER_DESCRIPTIONS[path]?.[parameter.name] ?? `Only the items whose \`${parameter.name}\` is this value.`
  }
  return undefined
}

const REQUEST_ID_HEADER = {
  description: "The request's id, also in an error's `request_id`.",
  schema: { type: "string", format: "uuid" }
}

/** Every operation of the document, with its path and method. */
const operationsOf = (spec: OpenApi.OpenAPISpec): Array<{ path: string; method: string; operation: any }> =>
  Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>)
      .filter(([, operation]) => operation !== null && typeof operation === "object" && "responses" in operation)
      .map(([method, operation]) => ({ path, method, operation }))
  )

/** An alias property removed from an object schema, the canonical one told about it. */
const foldAliases = (schema: any): void => {
  if (schema === null || typeof schema !== "object") return
  const properties = schema.properties
  if (properties !== undefined && typeof properties === "object") {
    for (const [alias, canonical] of Object.entries(ALIASES)) {
      if (!(alias in properties)) continue
      if (canonical in properties) {
        const target = properties[canonical]
        target.description = [target.description, `Also accepted as \`${alias}\`.`].filter(Boolean).join(" ")
      } else {
        properties[canonical] = { ...properties[alias], description: `Also accepted as \`${alias}\`.` }
      }
      delete properties[alias]
      if (Array.isArray(schema.required)) {
        schema.required = schema.required.map((name: string) => (name === alias ? canonical : name))
      }
    }
  }
  for (const value of Object.values(schema)) foldAliases(value)
}

/** `id`-like properties that name one of the platform's resources: UUIDs. Others (network ids, OAuth client ids) are free text. */
const UUID_PROPERTIES = new Set([
  "id",
  "program_id",
  "wallet_id",
  "card_id",
  "cardholder_id",
  "financial_account_id",
  "from_financial_account_id",
  "to_financial_account_id",
  "transaction_id",
  "transfer_id",
  "book_transfer_id",
  "event_id",
  "webhook_subscription_id",
  "dispute_id",
  "provisional_credit_transfer_id",
  "reversal_transfer_id",
  "request_id",
  "api_key_id"
])

/** A string schema (or a nullable one's string member) given a format. */
const giveFormat = (schema: any, format: string): void => {
  if (schema === null || typeof schema !== "object") return
  if (schema.type === "string" && schema.format === undefined && schema.enum === undefined) schema.format = format
  for (const member of schema.anyOf ?? []) giveFormat(member, format)
}

/** Properties that are counts, amounts in minor units, months, years, codes or durations: whole numbers. */
const isWholeNumber = (name: string) =>
  name === "amount" ||
  name === "count" ||
  name === "exp_month" ||
  name === "exp_year" ||
  name === "day" ||
  name === "month" ||
  name === "year" ||
  name === "response_code" ||
  name === "events_queued" ||
  /_(amount|minor|count|ms|seconds)$/.test(name)

/** What the fields every resource shares mean, for the properties that say nothing of their own. */
const COMMON_DESCRIPTIONS: Readonly<Record<string, string>> = {
  id: "The object's id (a UUID).",
  object: "The kind of object.",
  program_id: "The program the object belongs to.",
  organization_id: "The organization the object belongs to.",
  wallet_id: "The wallet's id.",
  card_id: "The card's id, or null when there is none.",
  cardholder_id: "The cardholder's id.",
  financial_account_id: "The financial account's id.",
  from_financial_account_id: "The account debited.",
  to_financial_account_id: "The account credited.",
  transaction_id: "The transaction's id.",
  transfer_id: "The transfer's id.",
  event_id: "The event's id.",
  webhook_subscription_id: "The webhook subscription's id.",
  created_at: "When the object was created (RFC 3339, UTC).",
  updated_at: "When the object last changed (RFC 3339, UTC).",
  posted_at: "When it was posted (RFC 3339, UTC).",
  expires_at: "When it expires (RFC 3339, UTC).",
  amount: "An amount in minor units of the currency (cents for USD).",
  currency: "An ISO 4217 currency code, upper case.",
  status: "The object's status.",
  state: "The object's state.",
  type: "The object's type.",
  name: "A name.",
  description: "A free text description, or null.",
  metadata: "Up to 50 string keys (at most 40 characters) with string values (at most 500): your own data, returned as given.",
  tags: "The tags of the wallets the event concerns.",
  url: "The URL.",
  secret: "The secret, shown in this answer only.",
  last_four: "The last four digits of the card number.",
  exp_month: "The month of expiry (1-12).",
  exp_year: "The year of expiry.",
  mcc: "The merchant category code (4 digits).",
  data: "The object the event describes, as it was when the event happened.",
  event_types: 'The event types delivered; `["*"]` for every type.',
  decline_reason: "Why it was declined, or null.",
  payment_rail: "The rail that moves the money.",
  disabled: "Whether delivery is paused.",
  role: "The key's role: admin, developer or viewer.",
  scopes: "The OAuth scopes.",
  balance: "The balance: credits minus debits of the principal book, in minor units.",
  book: "The book of the entry (principal or cash).",
  entries: "The book transfer's entries, debits and credits in each book.",
  request_id: "The request's id, as in the Request-Id header.",
  response_code: "The HTTP status the endpoint answered, 0 when none.",
  attempted_at: "When the attempt was made (RFC 3339, UTC)."
}

/** A number schema (or a nullable one's number member) said to be an integer: amounts are whole minor units. */
const integerize = (schema: any): void => {
  if (schema === null || typeof schema !== "object") return
  if (schema.type === "number") schema.type = "integer"
  for (const member of schema.anyOf ?? []) integerize(member)
}

/** `date-time` on every `…_at` string property, `uuid` on the resource ids, `integer` on amounts (minor units). */
const giveFormats = (node: unknown): void => {
  if (node === null || typeof node !== "object") return
  const properties = (node as { properties?: Record<string, unknown> }).properties
  if (properties !== undefined && typeof properties === "object") {
    for (const [name, schema] of Object.entries(properties)) {
      if (isWholeNumber(name)) integerize(schema)
      if ((schema as any)?.description === undefined && (schema as any)?.$ref === undefined && COMMON_DESCRIPTIONS[name] !== undefined) {
        ;(schema as any).description = COMMON_DESCRIPTIONS[name]
      }
      if (name.endsWith("_at")) giveFormat(schema, "date-time")
      else if (UUID_PROPERTIES.has(name)) giveFormat(schema, "uuid")
    }
  }
  for (const value of Object.values(node)) giveFormats(value)
}

/** The resources an event may carry: component, its `object` value, the event types that carry it. */
const EVENT_OBJECTS: ReadonlyArray<readonly [string, string, string]> = [
  ["Wallet", "wallet", "wallet.*"],
  ["FinancialAccount", "financial_account", "financial_account.created and balance.updated"],
  ["Card", "card", "card.*"],
  ["Transfer", "transfer", "transfer.*"],
  ["Transaction", "transaction", "transaction.updated"],
  ["Dispute", "dispute", "dispute.*"],
  ["Cardholder", "cardholder", "cardholder.*"],
  ["OAuthGrant", "oauth_grant", "oauth_grant.*"],
  ["WebhookSubscription", "webhook_subscription", "webhook.test"]
]

/**
 * `{ allOf: [{ $ref }], description }`, Effect's form of a described property whose schema is a
 * component, as `{ $ref, description }` (OpenAPI 3.1 allows siblings of `$ref`): the same type for
 * every generator, without a one-member intersection.
 */
const unwrapDescribedRefs = (node: unknown): void => {
  if (node === null || typeof node !== "object") return
  const properties = (node as { properties?: Record<string, any> }).properties
  if (properties !== undefined && typeof properties === "object") {
    for (const [name, schema] of Object.entries(properties)) {
      const keys = Object.keys(schema ?? {})
      if (
        Array.isArray(schema?.allOf) &&
        schema.allOf.length === 1 &&
        schema.allOf[0].$ref !== undefined &&
        keys.every((key) => key === "allOf" || key === "description")
      ) {
        properties[name] = { $ref: schema.allOf[0].$ref, description: schema.description }
      }
    }
  }
  for (const value of Object.values(node)) unwrapDescribedRefs(value)
}

/** Whether `$ref` to `name` appears anywhere under `node`. */
const refers = (node: unknown, name: string): boolean => JSON.stringify(node).includes(`"#/components/schemas/${name}"`)

/** The sets the generator-ready pass needs from the API definition. */
export interface ApiFacts {
  /** Operation ids that need X-Program-ID. */
  readonly programScoped: ReadonlySet<string>
  /** Every error `type` the envelope can carry. */
  readonly errorTypes: ReadonlyArray<string>
}

/**
 * Makes the document one that client generators trust (issue 49, docs/api.md#openapi): the headers
 * the server reads and sends declared, paging parameters typed, aliases folded into their canonical
 * field, HTML answers declared as HTML, `error.type` closed, formats on ids and times, the batch's
 * item typed, every tag declared and no unused component left.
 */
export const makeGeneratorReady = (spec: OpenApi.OpenAPISpec, facts: ApiFacts): void => {
  const schemas = spec.components.schemas as Record<string, any>
  for (const { path, method, operation } of operationsOf(spec)) {
    const parameters: Array<any> = (operation.parameters ?? []).filter((parameter: any) => !(parameter.name in ALIASES))
    for (const parameter of parameters) {
      const paging = parameter.in === "query" ? PAGING[parameter.name] : undefined
      if (paging !== undefined) {
        parameter.schema = { ...paging.schema }
        parameter.description = paging.description
      }
    }
    const isList = parameters.some((parameter) => parameter.in === "query" && parameter.name === "page")
    for (const parameter of parameters) {
      if (parameter.description === undefined) parameter.description = parameterDescription(path, parameter, isList)
    }
    if (path.startsWith("/v1/")) {
      if (facts.programScoped.has(operation.operationId)) {
        parameters.push({
          name: "X-Program-ID",
          in: "header",
          required: true,
          description: "The program the call acts in (a program the key may use; 403 otherwise).",
          schema: { type: "string", format: "uuid" }
        })
      }
      if (method === "post") {
        parameters.push({
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "A UUID naming this request: the same key with the same request answers the stored response (with `Idempotent-Replayed: true`), with another request 409. Kept 24 hours.",
          schema: { type: "string", format: "uuid" }
        })
      }
    }
    operation.parameters = parameters
    foldAliases(operation.requestBody)
    for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
      response.headers = { ...response.headers, "Request-Id": REQUEST_ID_HEADER }
      if (method === "post" && status.startsWith("2") && path.startsWith("/v1/")) {
        response.headers["Idempotent-Replayed"] = {
          description: "`true` when this answer is the stored one of an earlier request with the same Idempotency-Key.",
          schema: { type: "string", enum: ["true"] }
        }
      }
    }
  }
  // The embed document and the endpoint portal answer an HTML page, not an empty 204.
  for (const path of ["/v1/cards/embed", "/v1/webhook-portal"]) {
    const operation = (spec.paths as Record<string, any>)[path]?.get
    if (operation === undefined) continue
    delete operation.responses["204"]
    operation.responses["200"] = {
      description: "An HTML document, for an iframe.",
      headers: { "Request-Id": REQUEST_ID_HEADER },
      content: { "text/html": { schema: { type: "string" } } }
    }
  }
  for (const component of ["ErrorEnvelope", "TransferBatchItemError"]) {
    const error = schemas[component]?.properties?.error?.properties
    if (error?.type !== undefined) error.type = { ...error.type, enum: [...facts.errorTypes] }
  }
  // The batch's items are transfer bodies: the schema of POST /v1/transfers, aliases folded.
  const transferBody = (spec.paths as Record<string, any>)["/v1/transfers"]?.post?.requestBody?.content?.["application/json"]?.schema
  if (transferBody !== undefined) {
    // The rail is required under one of its spellings: the canonical one, documented.
    transferBody.required = [...new Set(["payment_rail", ...(transferBody.required ?? [])])]
  }
  if (transferBody !== undefined && schemas.TransferBatchItem !== undefined) {
    schemas.TransferBatchItem = { ...structuredClone(transferBody), description: "A transfer, exactly as the body of POST /v1/transfers." }
  }
  // An event's `data.object` is one resource, told by its `object` field (docs/webhooks.md#event-types).
  const eventObject = schemas.Event?.properties?.data?.properties?.object
  if (eventObject !== undefined) {
    const resources = EVENT_OBJECTS.filter(([component]) => schemas[component] !== undefined)
    schemas.Event.properties.data.properties.object = {
      description:
        "The resource the event is about, as it was when the event happened; its `object` field tells which: " +
        resources.map(([component, object, types]) => `${object} (${component}) for ${types}`).join("; ") +
        ".",
      oneOf: resources.map(([component]) => ({ $ref: `#/components/schemas/${component}` })),
      discriminator: {
        propertyName: "object",
        mapping: Object.fromEntries(resources.map(([component, object]) => [object, `#/components/schemas/${component}`]))
      }
    }
  }
  if (schemas.AmountMinor !== undefined) {
    schemas.AmountMinor = {
      type: "integer",
      minimum: 1,
      description: "An amount in minor units of its currency (cents for USD): a positive integer."
    }
  }
  foldAliases(schemas)
  unwrapDescribedRefs(spec.paths)
  unwrapDescribedRefs(schemas)
  giveFormats(spec.paths)
  giveFormats(schemas)
  for (const name of Object.keys(schemas)) {
    const { [name]: _self, ...others } = schemas
    if (!refers(spec.paths, name) && !refers(others, name)) delete schemas[name]
  }
  const tags = new Set(spec.tags.map((tag) => tag.name))
  for (const { operation } of operationsOf(spec)) {
    for (const tag of operation.tags ?? []) {
      if (!tags.has(tag)) {
        spec.tags.push({ name: tag })
        tags.add(tag)
      }
    }
  }
}
