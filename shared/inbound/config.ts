import { envNumber } from '../platform/config/env.ts';

/**
 * Inbound settings (docs/inbound.md). `RETENTION_DAYS` is the stack's `retentionDays`: received
 * mail is kept as long as sent mail's bodies (the items by their TTL, the objects by the bucket's
 * lifecycle rule).
 */
export const inboundRetentionDays = (): number => envNumber('RETENTION_DAYS', 35, { min: 1 });
