import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { CreateDispute, Dispute, DisputeFilter, ResolveDispute } from "@issuing/core"
import { Schema } from "effect"
import { BusinessRules, SandboxOnly } from "./Annotations.js"
import { ListOf, PagingParams, post } from "./Common.js"
import { NetworkRight } from "./NetworkApi.js"
import { ProgramScoped } from "./Security.js"
import { BusinessRuleFailure, NotFoundFailure } from "../errors.js"

// The records and inputs are core's (disputes/Records.ts): one schema each, decoded here once.
export { Dispute }

/** A path id stays a plain string: a malformed one is looked up (findOwned) and not found, a 404. */
const DisputePath = Schema.Struct({ dispute_id: Schema.String })

/** Disputes of card transactions (docs/disputes.md). */
export class DisputesApi extends HttpApiGroup.make("disputes")
  .add(
    post("create", "/disputes")
      .setPayload(CreateDispute)
      .addSuccess(Dispute)
      // The transaction it names; amount_exceeds_disputable, transaction_not_disputable; the
      // provisional credit's running totals.
      .addError(NotFoundFailure)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["amount_exceeds_disputable", "transaction_not_disputable", "balance_limit_exceeded"])
  )
  .add(
    HttpApiEndpoint.get("list", "/disputes")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...DisputeFilter.fields }))
      .addSuccess(ListOf(Dispute))
  )
  .add(HttpApiEndpoint.get("get", "/disputes/:dispute_id").setPath(DisputePath).addError(NotFoundFailure).addSuccess(Dispute))
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** A dispute's resolution: the same answer from the sandbox's simulation and the network's route. */
const resolve = () =>
  post("resolve", "/:dispute_id/resolve" as const)
    .setPath(DisputePath)
    .setPayload(ResolveDispute)
    .addSuccess(Dispute)
    .addError(NotFoundFailure)
    // balance_limit_exceeded: the reversal would take a running total past 2^53 − 1.
    .addError(BusinessRuleFailure)
    .annotate(BusinessRules, ["balance_limit_exceeded"])

/** Sandbox simulation of the network's decision on a dispute (404 in production). */
export class SimulateDisputesApi extends HttpApiGroup.make("simulateDisputes")
  .add(resolve())
  .annotate(SandboxOnly, true)
  .middleware(ProgramScoped)
  .prefix("/v1/simulate/disputes") {}

/**
 * The network's decision on a dispute (docs/network.md, docs/disputes.md), in every environment:
 * program-scoped as disputes are; the caller needs the `network` right (403 before the body is
 * decoded or anything read: NetworkRight).
 */
export class NetworkDisputesApi extends HttpApiGroup.make("networkDisputes")
  .add(resolve())
  .middleware(NetworkRight)
  .middleware(ProgramScoped)
  .prefix("/v1/network/disputes") {}
