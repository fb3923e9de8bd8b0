/**
 * All three client factories in one import, for tests and scripts. Function code imports the
 * per-service module it needs (`./dynamo.ts`, `./sqs.ts`, `./s3.ts`) so that each Lambda bundle
 * carries only the SDK clients it uses.
 */
export { sdkTimeouts } from './client-options.ts';
export { dynamo } from './dynamo.ts';
export { s3 } from './s3.ts';
export { sqs } from './sqs.ts';
