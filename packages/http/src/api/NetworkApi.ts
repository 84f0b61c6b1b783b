import { HttpApiGroup, HttpApiMiddleware } from "@effect/platform"
import { CardMessageRequest, NetworkCardMessage } from "@issuing/core"
import { CallsOut } from "./Annotations.js"
import { post } from "./Common.js"
import { OrganizationScoped } from "./Security.js"
import { PermissionFailure } from "../errors.js"

/**
 * Marks a group whose every operation needs the caller's `network` right (docs/network.md#authentication):
 * 403 permission_denied before the body is read or decoded, nothing written. Added to a group
 * before its scope middleware, so it runs inside it, with the caller resolved.
 */
export class NetworkRight extends HttpApiMiddleware.Tag<NetworkRight>()("NetworkRight", { failure: PermissionFailure }) {}

/**
 * The network's door for card messages (docs/network.md): organization-scoped (the card is found by
 * its number, so no X-Program-ID), needing the `network` right. A message may ask the program's
 * real-time decision, so it runs outside any transaction and posts at its commit point, under the
 * claim of its `network_message_id` (CallsOut).
 */
export class NetworkCardMessagesApi extends HttpApiGroup.make("networkCardMessages")
  .add(post("create", "/network/card-messages").setPayload(CardMessageRequest).addSuccess(NetworkCardMessage).annotate(CallsOut, true))
  .middleware(NetworkRight)
  .middleware(OrganizationScoped)
  .prefix("/v1") {}
