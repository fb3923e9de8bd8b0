import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type InboundDeleteRequest, inboundDeleteRequest } from '#shared/schemas/inbound.ts';
import { deleteInboundMessage } from '#shared/services/inbound/query.ts';

/** POST /inbound/delete-1.0: deletes one of the caller's received messages and its content. */
export const handler = protectedHandler<InboundDeleteRequest>(
  'inbound-delete',
  { input: { schema: inboundDeleteRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await deleteInboundMessage(input.inbound_uuid, caller.account)),
);
