import { apikeysRouteDetails, apikeysRoutes } from './apikeys/routes.ts';
import { avatarsRouteDetails, avatarsRoutes } from './avatars/routes.ts';
import { deliveryRouteDetails, deliveryRoutes } from './delivery/routes.ts';
import { domainsRouteDetails, domainsRoutes } from './domains/routes.ts';
import { inboundRouteDetails, inboundRoutes } from './inbound/routes.ts';
import { messagesRouteDetails, messagesRoutes } from './messages/routes.ts';
import type { Route, RouteDetails } from './platform/http/route.ts';
import { serviceRouteDetails, serviceRoutes } from './service/routes.ts';
import { statsRouteDetails, statsRoutes } from './stats/routes.ts';
import { suppressionsRouteDetails, suppressionsRoutes } from './suppressions/routes.ts';
import { templatesRouteDetails, templatesRoutes } from './templates/routes.ts';
import { trackingRouteDetails, trackingRoutes } from './tracking/routes.ts';
import { webhooksRouteDetails, webhooksRoutes } from './webhooks/routes.ts';

/**
 * The route table: every wing's routes, in the order of the OpenAPI document. Each route is declared
 * once, in its wing's routes.ts (method, path, scopes, dry run, and beside it its details: summary,
 * schemas, errors, examples, access); the local gateway, the CDK stack, IAM and the OpenAPI document
 * read them here. No function imports this table: a handler imports its own route.
 */
export const routes = [
  ...serviceRoutes,
  ...avatarsRoutes,
  ...messagesRoutes,
  ...deliveryRoutes,
  ...statsRoutes,
  ...domainsRoutes,
  ...suppressionsRoutes,
  ...webhooksRoutes,
  ...templatesRoutes,
  ...inboundRoutes,
  ...apikeysRoutes,
  ...trackingRoutes,
] as const satisfies readonly Route[];

export type RouteId = (typeof routes)[number]['id'];

/** Every route's details, by route id. */
export const routeDetails: Record<RouteId, RouteDetails> = {
  ...serviceRouteDetails,
  ...avatarsRouteDetails,
  ...messagesRouteDetails,
  ...deliveryRouteDetails,
  ...statsRouteDetails,
  ...domainsRouteDetails,
  ...suppressionsRouteDetails,
  ...webhooksRouteDetails,
  ...templatesRouteDetails,
  ...inboundRouteDetails,
  ...apikeysRouteDetails,
  ...trackingRouteDetails,
};

/** One route of the table, by id (the local host, the stack and tests; a handler imports its own). */
export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (route === undefined) throw new Error(`Unknown route ${id}`);
  return route;
}
