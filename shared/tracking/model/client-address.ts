import { isIP } from 'node:net';

/**
 * The client address as stored with an open or a click: IPv4 truncated to its /24
 * (`198.51.100.0/24`), IPv6 to its /48 (`2001:db8:1::/48`); a full address is never stored.
 */
export function truncatedAddress(address: string): string | undefined {
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const version = isIP(plain);
  if (version === 4) return `${plain.split('.').slice(0, 3).join('.')}.0/24`;
  if (version !== 6) return undefined;
  const groups = expandIpv6(plain)
    .slice(0, 3)
    .map((group) => group.replace(/^0+(?=.)/, ''));
  return `${groups.join(':')}::/48`;
}

function expandIpv6(address: string): string[] {
  const withoutZone = address.split('%')[0] as string;
  const [head, tail] = withoutZone.includes('::') ? withoutZone.split('::') : [withoutZone, undefined];
  const headGroups = head === '' || head === undefined ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  return [...headGroups, ...Array.from({ length: missing }, () => '0'), ...tailGroups].map((group) =>
    group.toLowerCase(),
  );
}

/** Whether an IPv4 address is inside `prefix/bits`. */
export function inIpv4Range(address: string, prefix: string, bits: number): boolean {
  if (isIP(address) !== 4) return false;
  const value = (text: string) => text.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  const size = 2 ** (32 - bits);
  return Math.floor(value(address) / size) === Math.floor(value(prefix) / size);
}
