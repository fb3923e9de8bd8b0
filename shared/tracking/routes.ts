import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { trackingTokenRequest } from './schemas.ts';

// Both answer first and record the hit after the answer (docs/tracking.md, "Speed").
export const trackOpen = route('track-open', 'GET /t/o/{token}', [], { public: true, afterResponse: true });
export const trackClick = route('track-click', 'GET /t/c/{token}', [], { public: true, afterResponse: true });

const token = 'AX3k9c2mQv0f8Jd6yT1bLw4nZs7hRq5eUo2iGa8xVb3cNp6tYj';

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const trackingRoutes = [trackOpen, trackClick] as const;

/**
 * Public routes that recipients' mail clients call (docs/tracking.md): no token, rate-limited per
 * client address like every public route. The open answers before any read; the click reads the
 * message's links (unless this instance holds them) to answer; both then read the message and
 * record the hit with one write.
 */
export const trackingRouteDetails = {
  'track-open': {
    summary: 'Open pixel: a 1×1 GIF, recording an open',
    tag: 'messages',
    access: { table: 'write', linkTokens: 'open' },
    request: trackingTokenRequest,
    requestIn: 'path',
    examples: {
      request: { pixel: { summary: 'The token of an open pixel in a sent message', value: { token } } },
    },
    raw: { description: 'A 1×1 transparent GIF, whatever the token', status: 200, contentType: 'image/gif' },
  },
  'track-click': {
    summary: 'Tracked link: 302 to the link of the stored message, recording a click',
    tag: 'messages',
    access: { table: 'write', objects: { 'messages/': ['read'] }, linkTokens: 'open' },
    request: trackingTokenRequest,
    requestIn: 'path',
    examples: {
      request: { link: { summary: 'The token of a tracked link in a sent message', value: { token } } },
    },
    raw: {
      description:
        'Found: on to the original URL (Location); an unknown or changed token gets 404 and a neutral page',
      status: 302,
      notFound: 'A neutral HTML page: the token is unknown, changed or names no link; nothing is recorded',
    },
  },
} as const satisfies RouteDetailsOf<(typeof trackingRoutes)[number]>;
