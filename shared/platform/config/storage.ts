import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { envString } from './env.ts';

/**
 * Names of the table, queue and bucket. They are read when first needed, so a function that is
 * missing one answers code 3 ("database not configured") instead of failing to start.
 */
function required(name: string, what: string): string {
  const value = envString(name);
  if (value === undefined)
    throw new ServiceError(Code.DatabaseNotConfigured, `The ${what} is not configured`);
  return value;
}

export const tableName = (): string => required('TABLE_NAME', 'message table');
export const queueUrl = (): string => required('QUEUE_URL', 'send queue');
export const bucketName = (): string => required('BUCKET_NAME', 'object bucket');
