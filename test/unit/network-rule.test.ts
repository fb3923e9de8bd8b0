import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { buildBlockList, isBlocked } from '../../shared/platform/middleware/network-rule.ts';

describe('CIDR block list', () => {
  const list = buildBlockList(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '127.0.0.2/32']);

  it('blocks addresses inside the networks and single hosts', () => {
    for (const address of [
      '10.0.0.1',
      '10.255.255.255',
      '192.168.1.7',
      '2001:db8::1',
      '2001:db8:ffff::9',
      '127.0.0.2',
    ]) {
      assert.equal(isBlocked(list, address), true, address);
    }
  });

  it('lets everything else through, including neighbours of the networks', () => {
    for (const address of ['11.0.0.1', '9.255.255.255', '192.168.1.8', '2001:db9::1', '127.0.0.1', '::1']) {
      assert.equal(isBlocked(list, address), false, address);
    }
  });

  it('does not block what is not an address (the rule never reads forwarded headers)', () => {
    assert.equal(isBlocked(list, ''), false);
    assert.equal(isBlocked(list, '10.0.0.1, 8.8.8.8'), false);
  });

  it('covers everything with /0 and nothing when empty', () => {
    assert.equal(isBlocked(buildBlockList(['0.0.0.0/0']), '203.0.113.9'), true);
    assert.equal(isBlocked(buildBlockList([]), '203.0.113.9'), false);
  });

  it('fails at start on a malformed entry', () => {
    assert.throws(() => buildBlockList(['10.0.0.0/33']), /invalid prefix/);
    assert.throws(() => buildBlockList(['10.0.0/8']), /not an IP network/);
    assert.throws(() => buildBlockList(['example.com/24']), /not an IP network/);
    assert.throws(() => buildBlockList(['2001:db8::/129']), /invalid prefix/);
    assert.throws(() => buildBlockList(['10.0.0.0/x']), /invalid prefix/);
  });
});
