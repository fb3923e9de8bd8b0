import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type InboundQueryRequest, inboundQueryRequest } from '#shared/schemas/inbound.ts';
import { getInboundDetails, listInbound } from '#shared/services/inbound/query.ts';

/** POST /inbound/query-1.0: one of the caller's received messages in full, or a page of them. */
export const handler = protectedHandler<InboundQueryRequest>(
  'inbound-query',
  { input: { schema: inboundQueryRequest, from: 'body' } },
  async ({ input, caller }) =>
    input.inbound_uuid !== undefined
      ? dataResponse(await getInboundDetails(input.inbound_uuid, caller.account))
      : dataResponse(await listInbound(caller.account, input.filters ?? {}, input.cursor)),
);
