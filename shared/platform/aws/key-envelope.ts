import { envString } from '../config/env.ts';
import { localKey } from '../config/local-key-file.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { observeClient } from './client-observer.ts';
import { sdkTimeouts } from './client-options.ts';

/**
 * Envelope encryption of DKIM private keys through the AWS Encryption SDK: each key is encrypted
 * under a fresh data key, and the data key is wrapped by
 * - a KMS key on AWS (`DKIM_KMS_KEY_ARN`), or
 * - locally, a raw AES-256 wrapping key: `DKIM_LOCAL_WRAPPING_KEY` (base64 of 32 bytes), else the
 *   file `<DATA_DIR>/dkim-wrapping.key`, created on first use.
 * The encryption context binds each ciphertext to its domain and selector, so a ciphertext copied to
 * another item does not decrypt. The SDK is imported on first use only: functions that never touch
 * a private key (the status endpoint) do not load it.
 */
export type EncryptionContext = Record<string, string>;

interface Envelope {
  seal(plaintext: Buffer, context: EncryptionContext): Promise<string>;
  open(ciphertext: string, context: EncryptionContext): Promise<Buffer>;
}

export const localWrappingKeyFile = 'dkim-wrapping.key';
const keyNamespace = 'svc-mail';
const keyName = 'dkim-local-wrapping-key';

function configured(): ServiceError {
  return new ServiceError(Code.DatabaseNotConfigured, 'The DKIM key store is not configured');
}

/** The local wrapping key: `DKIM_LOCAL_WRAPPING_KEY`, else the file `<DATA_DIR>/dkim-wrapping.key`. */
export function localWrappingKey(): Uint8Array {
  const key = localKey('DKIM_LOCAL_WRAPPING_KEY', localWrappingKeyFile);
  if (key === undefined) throw configured();
  return key;
}

async function createEnvelope(): Promise<Envelope> {
  const esdk = await import('./encryption-sdk.ts');
  const options = {
    commitmentPolicy: esdk.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT,
    maxEncryptedDataKeys: 1,
  };
  const { encrypt } = esdk.buildEncrypt(options);
  const { decrypt } = esdk.buildDecrypt(options);
  const kmsKeyArn = envString('DKIM_KMS_KEY_ARN');
  const keyring =
    kmsKeyArn !== undefined
      ? new esdk.KmsKeyringNode({
          generatorKeyId: kmsKeyArn,
          // Short socket timeouts and three attempts, as for the other AWS clients.
          clientProvider: esdk.cacheClients((region: string) => {
            const client = esdk.getClient(esdk.KMS, { maxAttempts: 3, requestHandler: sdkTimeouts })(region);
            return client === false ? client : observeClient(client);
          }),
        })
      : new esdk.RawAesKeyringNode({
          keyName,
          keyNamespace,
          unencryptedMasterKey: localWrappingKey(),
          wrappingSuite: esdk.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
        });
  return {
    seal: async (plaintext, context) => {
      const { result } = await encrypt(keyring, plaintext, { encryptionContext: context });
      return result.toString('base64');
    },
    open: async (ciphertext, context) => {
      const { plaintext, messageHeader } = await decrypt(keyring, Buffer.from(ciphertext, 'base64'));
      for (const [name, value] of Object.entries(context)) {
        if (messageHeader.encryptionContext[name] !== value) {
          throw new Error('Encryption context of a stored key does not match its item');
        }
      }
      return plaintext;
    },
  };
}

const keyServiceMissing = new Set([
  'NotFoundException',
  'DisabledException',
  'KMSInvalidStateException',
  'AccessDeniedException',
  'InvalidKeyUsageException',
]);
const keyServiceDown = new Set([
  'KMSInternalException',
  'DependencyTimeoutException',
  'ThrottlingException',
  'LimitExceededException',
  'TimeoutError',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/**
 * KMS faults in catalogue terms: a missing, disabled or forbidden key → 3 (not configured), an
 * unreachable or throttled KMS → 4 (retry later). Anything else (a corrupt or foreign ciphertext)
 * stays an internal error, code 2.
 */
export function toKeyServiceFault(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  const { name, code, $metadata, cause } = (error ?? {}) as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { name?: string; code?: string };
  };
  const names = [name, code, cause?.name, cause?.code].filter((value) => value !== undefined);
  if (names.some((value) => keyServiceMissing.has(value as string))) return configured();
  const status = $metadata?.httpStatusCode;
  if (names.some((value) => keyServiceDown.has(value as string)) || (status !== undefined && status >= 500)) {
    return new ServiceError(Code.DatabaseUnavailable, 'The key service is unavailable; retry later', {
      cause: error,
    });
  }
  return error;
}

async function keyService<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toKeyServiceFault(error);
  }
}

let envelope: Promise<Envelope> | undefined;

function current(): Promise<Envelope> {
  envelope ??= createEnvelope().catch((error: unknown) => {
    envelope = undefined;
    throw error;
  });
  return envelope;
}

/** Encrypts a secret; the result is a base64 AWS Encryption SDK message. */
export async function sealSecret(plaintext: Buffer, context: EncryptionContext): Promise<string> {
  return keyService(async () => (await current()).seal(plaintext, context));
}

/** Decrypts what sealSecret produced, checking that the encryption context is the expected one. */
export async function openSecret(ciphertext: string, context: EncryptionContext): Promise<Buffer> {
  return keyService(async () => (await current()).open(ciphertext, context));
}
