import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { freePort } from '../../infra/local/free-port.ts';
import { sealSecret } from '../../shared/platform/aws/key-envelope.ts';
import { isServiceError } from '../../shared/platform/errors/service-error.ts';
import { useHostEnvironment } from '../support/host.ts';

/**
 * The KMS keyring path of the key envelope. No KMS emulator runs here, so these tests cover what
 * can be shown without one: an unreachable KMS endpoint (a closed port: real sockets) is code 4,
 * and a KMS that answers "key not found" (a small HTTP server speaking KMS's JSON error format —
 * a stand-in, said so) is code 3. Each test file is its own process, so the envelope built here
 * with DKIM_KMS_KEY_ARN does not affect the others.
 */
describe('DKIM key envelope with a KMS keyring', () => {
  let stub: Server;
  let stubUrl: string;

  beforeAll(async () => {
    useHostEnvironment();
    stub = createServer((request, response) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ __type: 'NotFoundException', message: 'Key does not exist' }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', () => resolve()));
    const address = stub.address();
    stubUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    process.env.DKIM_KMS_KEY_ARN =
      'arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555';
  });
  afterAll(() => stub.close());

  it('answers 4 (retry later) when KMS is unreachable', async () => {
    process.env.AWS_ENDPOINT_URL_KMS = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(sealSecret(Buffer.from('secret'), { domain: 'a.test', selector: 's' }), (error) => {
      assert.ok(isServiceError(error));
      assert.equal(error.code, 4);
      return true;
    });
  });

  it('answers 3 (not configured) when the KMS key does not exist', async () => {
    process.env.AWS_ENDPOINT_URL_KMS = stubUrl;
    await assert.rejects(sealSecret(Buffer.from('secret'), { domain: 'a.test', selector: 's' }), (error) => {
      assert.ok(isServiceError(error), String(error));
      assert.equal(error.code, 3);
      return true;
    });
  });
});
