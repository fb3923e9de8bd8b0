import { envList, envNumber } from './env.ts';

/** Gateway-level settings shared by every HTTP function. */
export const httpConfig = {
  blockedCidrs: envList('BLOCKED_CIDRS'),
  rateLimitRps: envNumber('RATE_LIMIT_RPS', 50, { min: 0 }),
  rateLimitBurst: envNumber('RATE_LIMIT_BURST', 100, { min: 1 }),
  corsOrigins: envList('CORS_ORIGINS').length > 0 ? envList('CORS_ORIGINS') : ['*'],
};
