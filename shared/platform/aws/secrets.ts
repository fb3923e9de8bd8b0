import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { observeClient } from './client-observer.ts';
import { sdkTimeouts } from './client-options.ts';

let client: SecretsManagerClient | undefined;
const cache = new Map<string, Promise<string>>();

/**
 * The string value of a Secrets Manager secret, read once per cold start (the promise is kept, so
 * concurrent first calls share one read; a failed read is forgotten and tried again next time).
 */
export function secretString(secretId: string): Promise<string> {
  let value = cache.get(secretId);
  if (value === undefined) {
    client ??= observeClient(new SecretsManagerClient({ maxAttempts: 3, requestHandler: sdkTimeouts }));
    value = client.send(new GetSecretValueCommand({ SecretId: secretId })).then((result) => {
      if (result.SecretString === undefined) throw new Error(`Secret ${secretId} has no string value`);
      return result.SecretString;
    });
    value.catch(() => cache.delete(secretId));
    cache.set(secretId, value);
  }
  return value;
}

/**
 * SMTP relay credentials from a secret in Secrets Manager's username/password form:
 * `{"username": "…", "password": "…"}`.
 */
export async function smtpCredentials(secretId: string): Promise<{ user: string; pass: string }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await secretString(secretId));
  } catch (error) {
    if (error instanceof SyntaxError) throw new Error(`Secret ${secretId} is not JSON`);
    throw error;
  }
  const { username, password } = (parsed ?? {}) as { username?: unknown; password?: unknown };
  if (typeof username !== 'string' || typeof password !== 'string') {
    throw new Error(`Secret ${secretId} needs string fields "username" and "password"`);
  }
  return { user: username, pass: password };
}
