import type { DomainRecord } from './store/domains.ts';

/**
 * Why a domain may not send yet (111 on message add and batch), naming the records it still needs;
 * undefined when it may. Operator-registered domains always may.
 */
export function notReadyMessage(record: DomainRecord): string | undefined {
  if (record.sendingReady) return undefined;
  const checks = record.records ?? {};
  const missing = (['dkim', 'dkim_ed25519', 'mail_from_mx', 'mail_from_spf'] as const).filter(
    (purpose) => checks[purpose] !== undefined && checks[purpose]?.status !== 'verified',
  );
  const records = missing.length > 0 ? missing.join(', ') : 'dkim, mail_from_mx, mail_from_spf';
  return `${record.domain} is not sending_ready: its required DNS records are not verified yet (${records}); publish them and call /domain/verify-1.0 (docs/domains.md)`;
}
