import { envNumber } from '../platform/config/env.ts';

/**
 * How long opens and clicks are kept (`TRACKING_RETENTION_DAYS`, default 180): each recipient's
 * tracking record expires that many days after its last hit (the table's TTL).
 */
export const trackingRetentionDays = (): number => envNumber('TRACKING_RETENTION_DAYS', 180, { min: 1 });
