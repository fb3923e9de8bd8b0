import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { call, mintToken } from '../support/host.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/**
 * `npm start` keeps its state in DATA_DIR: a host stopped and started again on the same folder
 * still has the messages, domains and DKIM keys created before. (Its identity provider keeps its
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

  it('keeps messages, domains and DKIM keys in DATA_DIR', async () => {
    host = await startSecondaryHost(settings, undefined, dataDir);
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
    assert.equal(before.body.data.dkim_keys.length, 1);

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
  });
});
