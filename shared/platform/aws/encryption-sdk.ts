/**
 * The parts of the AWS Encryption SDK that key envelopes use, from its ESM packages.
 * `@aws-crypto/client-node` ships only CommonJS that `require()`s these packages; bundling that
 * makes esbuild wrap every module they share with the functions (the whole AWS SDK core) in lazy
 * initialisers, and V8 then parses each of them twice at every cold start (once with the bundle,
 * again when its initialiser runs), even in functions that load this module only on first use.
 */
export { buildDecrypt } from '@aws-crypto/decrypt-node';
export { buildEncrypt } from '@aws-crypto/encrypt-node';
export { cacheClients, getClient, KMS, KmsKeyringNode } from '@aws-crypto/kms-keyring-node';
export { CommitmentPolicy } from '@aws-crypto/material-management-node';
export { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';
