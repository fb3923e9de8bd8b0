import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, it } from 'vitest';

/**
 * The SMTP relay credentials adapter (shared/platform/aws/secrets.ts) with the real AWS SDK client over
 * HTTP. No Secrets Manager emulator runs here, so a small local server answers GetSecretValue in
 * the service's JSON protocol (the one stand-in of this file); it counts the reads.
 */
let server: Server;
let reads = 0;
const secrets = new Map<string, string>([
  ['relay', JSON.stringify({ username: 'mailer', password: 's3cret' })],
  ['broken', 'not json'],
  ['partial', JSON.stringify({ username: 'mailer' })],
]);

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      reads += 1;
      assert.equal(request.headers['x-amz-target'], 'secretsmanager.GetSecretValue');
      const { SecretId } = JSON.parse(body) as { SecretId: string };
      const value = secrets.get(SecretId);
      response.setHeader('content-type', 'application/x-amz-json-1.1');
      if (value === undefined) {
        response.statusCode = 400;
        return response.end(
          JSON.stringify({ __type: 'ResourceNotFoundException', message: 'no such secret' }),
        );
      }
      response.end(
        JSON.stringify({
          ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${SecretId}`,
          Name: SecretId,
          SecretString: value,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${port}`;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('SMTP relay credentials from Secrets Manager', () => {
  it('reads the secret once per cold start, however many sends ask', async () => {
    const { smtpCredentials } = await import('../../shared/platform/aws/secrets.ts');
    const before = reads;
    const all = await Promise.all([
      smtpCredentials('relay'),
      smtpCredentials('relay'),
      smtpCredentials('relay'),
    ]);
    for (const credentials of all) assert.deepEqual(credentials, { user: 'mailer', pass: 's3cret' });
    assert.deepEqual(await smtpCredentials('relay'), { user: 'mailer', pass: 's3cret' });
    assert.equal(reads - before, 1);
  });

  it('names the problem of a malformed secret without showing its value', async () => {
    const { smtpCredentials } = await import('../../shared/platform/aws/secrets.ts');
    await assert.rejects(smtpCredentials('broken'), /Secret broken is not JSON/);
    await assert.rejects(smtpCredentials('partial'), /needs string fields "username" and "password"/);
    await assert.rejects(smtpCredentials('missing'), (error: Error) => {
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  });
});
