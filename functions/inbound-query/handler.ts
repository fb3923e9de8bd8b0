import { getInboundDetails, listInbound } from '#shared/inbound/query.ts';
import { inboundQuery } from '#shared/inbound/routes.ts';
import { type InboundQueryRequest, inboundQueryRequest } from '#shared/inbound/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';

/** POST /inbound/query-1.0: one of the caller's received messages in full, or a page of them. */
export const handler = protectedHandler<InboundQueryRequest>(
  inboundQuery,
  { input: { schema: inboundQueryRequest, from: 'body' } },
  async ({ input, caller }) =>
    input.inbound_uuid !== undefined
      ? dataResponse(await getInboundDetails(input.inbound_uuid, caller.account))
      : dataResponse(await listInbound(caller.account, input.filters ?? {}, input.cursor)),
);
