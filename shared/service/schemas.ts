import * as z from 'zod/mini';
import { serverDate } from '../platform/schemas/dates.ts';

/*
 * Schemas of the service endpoints (health, keepalive status). The handlers do not import them
 * (public functions stay free of zod to keep their bundles small); the OpenAPI generator and the
 * tests do, through the route details (shared/service/routes.ts).
 */

export const healthResponse = z.object({
  status: z
    .literal('ok')
    .register(z.globalRegistry, { description: 'Always `ok` when the function answers' }),
  caller_ip: z.string().register(z.globalRegistry, {
    description: "The caller's address as the gateway saw the connection (never a forwarded header)",
    example: '203.0.113.7',
  }),
});

export const keepaliveStatusResponse = z.object({
  status: z.literal('alive'),
  at: serverDate('Server time: ISO 8601 with the numeric offset of the server time zone (SERVER_TZ)'),
});
