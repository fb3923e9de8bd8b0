import { deleteInboundMessage } from '#shared/inbound/query.ts';
import { inboundDelete } from '#shared/inbound/routes.ts';
import { type InboundDeleteRequest, inboundDeleteRequest } from '#shared/inbound/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /inbound/delete-1.0: deletes one of the caller's received messages and its content. */
export const handler = protectedHandler<InboundDeleteRequest>(
  inboundDelete,
  { input: { schema: inboundDeleteRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await deleteInboundMessage(input.inbound_uuid, caller.account)),
);
