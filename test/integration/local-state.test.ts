import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { call, mintToken } from '../support/host.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/**
 * `npm start` keeps its state in DATA_DIR: a host stopped and started again on the same folder
 * still has the messages, domains, DKIM keys and suppressions created before. (Its identity provider keeps its
 * signing key too; the issuer changes here only because the test picks free ports.)
 */
describe('local host state across a restart (npm start, LOCAL_STATE=persistent)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-mail-restart-'));
  const domain = 'persist.test';
  const account = 'persist-account';
  const settings = { LOCAL_STATE: 'persistent', SEED_DOMAINS: `${domain}=${account}` };
  let host: SecondaryHost | undefined;

  afterAll(async () => {
    await host?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Two host starts on disk: 30 s on a quiet run, over a minute on a busy 2-core machine.
  it('keeps messages, domains, DKIM keys and suppressions in DATA_DIR', { timeout: 240_000 }, async () => {
    host = await startSecondaryHost(settings, undefined, dataDir);
    // host.json also names the inbound mail server's port, and that server answers SMTP there.
    const hostFile = JSON.parse(readFileSync(join(dataDir, 'host.json'), 'utf8')) as {
      inbound_smtp_port: number;
    };
    assert.equal(hostFile.inbound_smtp_port, Number(new URL(host.env.INBOUND_SMTP_URL as string).port));
    const greeting = await new Promise<string>((resolve, reject) => {
      const socket = connect(hostFile.inbound_smtp_port, '127.0.0.1');
      socket.once('data', (chunk: Buffer) => {
        socket.end('QUIT\r\n');
        resolve(chunk.toString('utf8'));
      });
      socket.once('error', reject);
    });
    assert.match(greeting, /^220 /);
    assert.ok(existsSync(join(dataDir, 'dynamodb')), 'DynamoDB Local keeps no files in DATA_DIR');
    assert.ok(existsSync(join(dataDir, 'fauxqs')), 'fauxqs keeps no files in DATA_DIR');
    let token = await mintToken({ account, signer: host });
    const added = await call('POST', '/message/add-1.0', {
      baseUrl: host.url,
      token,
      body: {
        message_sender: `app@${domain}`,
        to: ['ada@recipient.test'],
        subject: 'Before the restart',
        content: { kind: 'text_only', text: 'kept' },
        scheduling: { mode: 'manual-wait' },
      },
    });
    assert.equal(added.status, 200, added.text);
    const uuid = added.body.data.message_uuid as string;
    const before = await call('GET', '/domain/dkim/status-1.0', {
      baseUrl: host.url,
      token,
      query: { domain },
    });
    assert.equal(before.status, 200, before.text);
    assert.ok(before.body.data.dkim_keys.length >= 1);
    const suppressed = await call('POST', '/suppression/add-1.0', {
      baseUrl: host.url,
      token,
      body: { emails: ['gone@recipient.test'] },
    });
    assert.equal(suppressed.status, 200, suppressed.text);
    assert.deepEqual(suppressed.body.data.added, ['gone@recipient.test']);

    await host.stop();
    host = await startSecondaryHost(settings, undefined, dataDir);
    token = await mintToken({ account, signer: host });

    const queried = await call('POST', '/message/query-1.0', {
      baseUrl: host.url,
      token,
      body: { message_uuid: uuid },
    });
    assert.equal(queried.status, 200, queried.text);
    assert.equal(queried.body.data.subject, 'Before the restart');
    assert.equal(queried.body.data.status, 'waiting');
    const after = await call('GET', '/domain/dkim/status-1.0', {
      baseUrl: host.url,
      token,
      query: { domain },
    });
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(after.body.data.dkim_keys, before.body.data.dkim_keys);
    assert.deepEqual(after.body.data.svc_config, before.body.data.svc_config);
    const listed = await call('POST', '/suppression/query-1.0', {
      baseUrl: host.url,
      token,
      body: { email: 'gone@recipient.test' },
    });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.data.suppression?.reason, 'manual');
  });
});
