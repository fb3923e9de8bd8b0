import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/host.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/**
 * A failing handler never takes the local host down, and a host that does go down never leaves a
 * second DynamoDB Local on its data folder. One DATA_DIR for three host starts in a row; the faults
 * come from the local host's test-only injection (LOCAL_FAULT_INJECTION=on, header x-local-fault).
 */
describe('the local host survives its handlers, and its DynamoDB Local never outlives it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-mail-survival-'));
  const settings = { LOCAL_STATE: 'persistent', LOCAL_FAULT_INJECTION: 'on' };
  const hosts: SecondaryHost[] = [];

  afterAll(async () => {
    for (const host of hosts) await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const hostPid = () => (JSON.parse(readFileSync(join(dataDir, 'host.json'), 'utf8')) as { pid: number }).pid;
  const isAlive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** Every DynamoDB Local process whose database is in this DATA_DIR. */
  const dynamoLocalsOnDataDir = () =>
    execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('DynamoDBLocal') && line.includes(join(dataDir, 'dynamodb')))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
  const health = async (host: SecondaryHost) => (await call('GET', '/health', { baseUrl: host.url })).status;

  it('answers code 2 with the request id when a handler throws, and keeps serving', {
    timeout: 240_000,
  }, async () => {
    const host = await startSecondaryHost(settings, undefined, dataDir);
    hosts.push(host);
    const thrown = await call<any>('GET', '/health', {
      baseUrl: host.url,
      headers: { 'x-local-fault': 'throw' },
      skipContract: 'an injected handler failure',
    });
    assert.equal(thrown.status, 500, thrown.text);
    assert.equal(thrown.body.error.code, 2);
    const requestId = thrown.headers.get('x-request-id');
    assert.ok(requestId);
    assert.equal(await health(host), 200);

    // A rejection that escapes the request after the answer is logged; the host stays up.
    const later = await call('GET', '/health', {
      baseUrl: host.url,
      headers: { 'x-local-fault': 'reject-later' },
    });
    assert.equal(later.status, 200, later.text);
    assert.equal(await health(host), 200);
    assert.equal(await health(host), 200);
  });

  it('stops its DynamoDB Local when an uncaught exception ends the host', { timeout: 60_000 }, async () => {
    const host = hosts[0] as SecondaryHost;
    const pid = hostPid();
    const dynamoPid = host.dynamo.pid as number;
    assert.ok(isAlive(dynamoPid));
    await call('GET', '/health', { baseUrl: host.url, headers: { 'x-local-fault': 'crash' } });
    await expect.poll(() => isAlive(pid), { timeout: 30_000 }).toBe(false);
    await expect.poll(() => isAlive(dynamoPid), { timeout: 30_000 }).toBe(false);
  });

  it('after a killed host, a start on the same DATA_DIR leaves exactly one DynamoDB Local', {
    timeout: 480_000,
  }, async () => {
    const killed = await startSecondaryHost(settings, undefined, dataDir);
    hosts.push(killed);
    const orphan = killed.dynamo.pid as number;
    process.kill(hostPid(), 'SIGKILL');
    await expect.poll(() => isAlive(hostPid()), { timeout: 30_000 }).toBe(false);
    // SIGKILL gives the host no chance to clean up: its Java child stays.
    assert.ok(isAlive(orphan), 'DynamoDB Local ended with its host; this test would prove nothing');
    assert.deepEqual(dynamoLocalsOnDataDir(), [orphan]);

    const next = await startSecondaryHost(settings, undefined, dataDir);
    hosts.push(next);
    assert.equal(isAlive(orphan), false);
    assert.deepEqual(dynamoLocalsOnDataDir(), [next.dynamo.pid]);
    assert.equal(await health(next), 200);
  });

  it('refuses to start on a DATA_DIR another live host uses, and leaves that host alone', {
    timeout: 240_000,
  }, async () => {
    const running = hosts[hosts.length - 1] as SecondaryHost;
    const runningPid = hostPid();
    await assert.rejects(startSecondaryHost(settings, undefined, dataDir), (error: Error) => {
      assert.match(error.message, /secondary host exited/);
      assert.match(error.message, new RegExp(`another local host \\(pid ${runningPid}\\) is running on`));
      assert.match(error.message, /set DATA_DIR to another folder/);
      return true;
    });
    assert.deepEqual(dynamoLocalsOnDataDir(), [running.dynamo.pid], 'no second DynamoDB Local');
    // (The test support removes host.json before each start; host.pid is the host's own record.)
    const owner = JSON.parse(readFileSync(join(dataDir, 'host.pid'), 'utf8')) as { host_pid: number };
    assert.equal(owner.host_pid, runningPid, 'the running host still owns the folder');
    assert.equal(await health(running), 200);
  });
});
