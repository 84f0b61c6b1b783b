import type { Caller } from "../access/Records.js"
import { PermissionDenied } from "../platform/Errors.js"
import type { Environment } from "../platform/IssuingConfig.js"
import type { TransferRequest } from "./Records.js"

/**
 * True for an inbound external-rail transfer: money arriving from outside the platform (ach_same_day,
 * wire or fednow_instant naming only the account credited; the settlement account is the other side).
 */
export const isInboundExternal = (request: TransferRequest): boolean =>
  request.payment_rail !== "book" && request.from_financial_account_id === null && request.to_financial_account_id !== null

/**
 * In production, inbound external-rail transfers come from the rails, not from callers: recording
 * one needs the `inbound_funding` key right, which no OAuth scope carries (docs/decisions.md,
 * "Inbound funding"). In sandbox every key that may write records them (tests and demos fund
 * wallets so). The refusal, or null when the transfer may be recorded.
 */
export const inboundFundingRefusal = (caller: Caller, environment: Environment, request: TransferRequest): PermissionDenied | null =>
  environment === "production" && isInboundExternal(request) && !caller.inboundFunding
    ? new PermissionDenied({
        message:
          caller.oauth === undefined
            ? "This API key cannot record an inbound transfer in production: it needs the inbound_funding right."
            : "An access token cannot record an inbound transfer in production: only an API key with the inbound_funding right can.",
        param: "payment_rail"
      })
    : null
