import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { type ZoneEntry, zoneFile } from './dns-server.ts';
import { hostInfo } from './host.ts';

/**
 * Records of the test run's DNS server (test/support/dns-server.ts), which the service's DKIM check
 * queries through DNS_SERVERS. Use names under a unique domain so parallel test files never meet.
 */
function write(name: string, entry: ZoneEntry): void {
  const file = zoneFile(hostInfo().dns.zoneDir, name);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(entry));
  renameSync(temporary, file);
}

/** Publishes TXT records at `name` (each record a list of ≤255-character strings). */
export function publishTxt(name: string, records: string[][]): void {
  write(name, { txt: records });
}

/** Publishes TXT and MX records at `name` (replacing what was there). */
export function publishRecords(name: string, entry: Pick<ZoneEntry, 'txt' | 'mx'>): void {
  write(name, entry);
}

/** Makes the server drop every query for `name`, as a dead or unreachable server would. */
export function silenceName(name: string): void {
  write(name, { behaviour: 'silent' });
}

export function removeName(name: string): void {
  rmSync(zoneFile(hostInfo().dns.zoneDir, name), { force: true });
}

/** `host:port` of the test DNS server. */
export function testDnsServer(): string {
  return hostInfo().dns.server;
}

/** Publishes a domain view's records as they are shown (TXT values in 255-byte strings, MX at 10). */
export function publishDomainRecords(
  records: ReadonlyArray<{ type: string; name: string; value: string }>,
): void {
  const byName = new Map<string, Required<Pick<ZoneEntry, 'txt' | 'mx'>>>();
  for (const record of records) {
    const entry = byName.get(record.name) ?? { txt: [], mx: [] };
    if (record.type === 'MX') entry.mx.push({ priority: 10, exchange: record.value });
    else entry.txt.push(record.value.match(/.{1,255}/g) ?? ['']);
    byName.set(record.name, entry);
  }
  for (const [name, entry] of byName) publishRecords(name, entry);
}
