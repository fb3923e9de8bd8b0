import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lookupTxt } from '../../shared/platform/dns/txt-lookup.ts';
import { publishTxt, silenceName, testDnsServer } from '../support/dns.ts';
import { uniqueDomain } from '../support/host.ts';

/**
 * The DNS adapter against real sockets: the run's DNS server, and a UDP socket that receives
 * queries and never answers (a dead resolver).
 */
describe('TXT lookup adapter', () => {
  let silent: Socket;
  let silentAddress: string;
  let received = 0;

  beforeAll(async () => {
    silent = createSocket('udp4');
    silent.on('message', () => {
      received += 1;
    });
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    silentAddress = `127.0.0.1:${silent.address().port}`;
  });
  afterAll(() => silent.close());

  it('finds multi-string TXT records and tells absent names apart', async () => {
    const name = `s1._domainkey.${uniqueDomain()}`;
    const long = `v=DKIM1; k=rsa; p=${'A'.repeat(392)}`;
    publishTxt(name, [[long.slice(0, 255), long.slice(255)]]);
    assert.deepEqual(await lookupTxt(name, { servers: [testDnsServer()] }), {
      kind: 'found',
      records: [[long.slice(0, 255), long.slice(255)]],
    });
    assert.deepEqual(await lookupTxt(`nothing.${uniqueDomain()}`, { servers: [testDnsServer()] }), {
      kind: 'absent',
    });
  });

  it('gives up on a dead resolver at its deadline', async () => {
    const started = Date.now();
    const result = await lookupTxt(`s._domainkey.${uniqueDomain()}`, {
      servers: [silentAddress],
      timeoutMs: 400,
    });
    const elapsed = Date.now() - started;
    assert.equal(result.kind, 'failed');
    assert.ok(received >= 1, 'the query reached the dead resolver');
    // Bounded by the deadline, with a wide margin for a loaded machine (it would otherwise hang).
    assert.ok(elapsed < 5_000, `took ${elapsed} ms`);
  });

  it('gives up when the server stays silent for one name, and when nothing listens', async () => {
    const name = `s._domainkey.${uniqueDomain()}`;
    silenceName(name);
    assert.equal((await lookupTxt(name, { servers: [testDnsServer()], timeoutMs: 300 })).kind, 'failed');
    const closed = createSocket('udp4');
    await new Promise<void>((resolve) => closed.bind(0, '127.0.0.1', () => resolve()));
    const port = closed.address().port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    assert.equal((await lookupTxt(name, { servers: [`127.0.0.1:${port}`], timeoutMs: 300 })).kind, 'failed');
  });

  it('fails cleanly on a malformed server list', async () => {
    assert.deepEqual(await lookupTxt('a.test', { servers: ['not a server'] }), {
      kind: 'failed',
      reason: 'EBADSERVERS',
    });
  });
});
