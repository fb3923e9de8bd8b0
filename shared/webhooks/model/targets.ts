import { BlockList, isIP } from 'node:net';

/**
 * Which webhook targets are allowed (docs/webhooks.md, "Targets"): `https` only on AWS, and no
 * address in the loopback, private, link-local, metadata or otherwise non-public ranges, checked
 * on the resolved address of every attempt (so a DNS change cannot turn a public name private).
 */
const forbidden = new BlockList();
// IPv4
forbidden.addSubnet('0.0.0.0', 8, 'ipv4'); // "this" network, unspecified
forbidden.addSubnet('10.0.0.0', 8, 'ipv4'); // private
forbidden.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT (shared)
forbidden.addSubnet('127.0.0.0', 8, 'ipv4'); // loopback
forbidden.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, includes the metadata service 169.254.169.254
forbidden.addSubnet('172.16.0.0', 12, 'ipv4'); // private
forbidden.addSubnet('192.0.0.0', 24, 'ipv4'); // IETF protocol assignments (e.g. 192.0.0.192 metadata on some clouds)
forbidden.addSubnet('192.168.0.0', 16, 'ipv4'); // private
forbidden.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking
forbidden.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
forbidden.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
// IPv6
forbidden.addAddress('::', 'ipv6'); // unspecified
forbidden.addAddress('::1', 'ipv6'); // loopback
forbidden.addSubnet('fc00::', 7, 'ipv6'); // unique local (private), includes the metadata service fd00:ec2::254
forbidden.addSubnet('fe80::', 10, 'ipv6'); // link-local
forbidden.addSubnet('ff00::', 8, 'ipv6'); // multicast

const rangeNames: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['169.254.169.254', 32, 'ipv4', 'metadata'],
  ['fd00:ec2::254', 128, 'ipv6', 'metadata'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['fc00::', 7, 'ipv6', 'private'],
];

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries. */
function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return { address: mapped[1], family: 'ipv4' };
  const version = isIP(address);
  if (version === 4) return { address, family: 'ipv4' };
  if (version === 6) return { address, family: 'ipv6' };
  return undefined;
}

/** Why an address may not be a webhook target, or undefined when it may. Not an address: refused. */
export function forbiddenReason(address: string): string | undefined {
  const parsed = normalise(address);
  if (parsed === undefined) return 'not an IP address';
  if (!forbidden.check(parsed.address, parsed.family)) return undefined;
  for (const [network, prefix, family, name] of rangeNames) {
    if (family !== parsed.family) continue;
    const range = new BlockList();
    if (prefix === (family === 'ipv4' ? 32 : 128)) range.addAddress(network, family);
    else range.addSubnet(network, prefix, family);
    if (range.check(parsed.address, family)) return `${name} address`;
  }
  return 'non-public address';
}

export interface TargetPolicy {
  /** https only (on AWS). */
  requireHttps: boolean;
  /** Lift the address rule (local host). */
  allowPrivate: boolean;
}

export const maxUrlLength = 2048;

/** Problems with a webhook URL as written (before any DNS lookup). */
export function urlProblem(raw: string, policy: TargetPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Must be an absolute http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Must be an http(s) URL';
  if (policy.requireHttps && url.protocol !== 'https:') return 'Must be an https URL';
  if (url.username !== '' || url.password !== '') return 'Must not carry credentials (user:password@)';
  if (url.hash !== '') return 'Must not carry a fragment (#…)';
  const host = hostOf(url);
  if (!policy.allowPrivate && isIP(host) !== 0) {
    const reason = forbiddenReason(host);
    if (reason !== undefined) return `Targets a ${reason} (${host}), which is not allowed`;
  }
  return undefined;
}

/** The host name or address of a URL, without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}
