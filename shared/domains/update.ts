import { domainNotFound } from './errors.ts';
import { type DomainSettings, updateDomainSettings } from './store/domain-checks.ts';
import { normaliseDomain } from './store/domains.ts';
import { type DomainView, domainView } from './view.ts';

/**
 * POST /domain/update-1.0: receiving and tracking switches. Receiving on AWS follows the table: the
 * inbound function reads the domain item for every message (docs/inbound.md).
 */
export async function updateDomain(
  name: string,
  account: string,
  settings: DomainSettings,
): Promise<DomainView> {
  const record = await updateDomainSettings(normaliseDomain(name), account, settings);
  if (record === undefined) throw domainNotFound();
  return domainView(record);
}
