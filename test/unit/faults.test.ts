import assert from 'node:assert/strict';
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { NoSuchBucket } from '@aws-sdk/client-s3';
import { QueueDoesNotExist } from '@aws-sdk/client-sqs';
import { describe, it } from 'vitest';
import { guarded, toServiceFault } from '../../shared/platform/aws/faults.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { Code } from '../../shared/platform/errors/catalogue.ts';
import { isServiceError, ServiceError } from '../../shared/platform/errors/service-error.ts';

const metadata = { $metadata: {} };
const codeOf = (error: unknown) => (isServiceError(error) ? error.code : 'untouched');

describe('fault mapping', () => {
  it('maps a missing table, bucket or queue to 3', () => {
    const table = toServiceFault(
      new ResourceNotFoundException({ message: 'no table', ...metadata }),
      'database',
    );
    assert.equal(codeOf(table), Code.DatabaseNotConfigured);
    assert.equal((table as ServiceError).message, 'The database is not configured');
    assert.equal(
      codeOf(toServiceFault(new NoSuchBucket({ message: 'x', ...metadata }), 'object storage')),
      3,
    );
    assert.equal(codeOf(toServiceFault(new QueueDoesNotExist({ message: 'x', ...metadata }), 'queue')), 3);
  });

  it('maps throttling, 5xx answers and network failures to 4', () => {
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow down', ...metadata });
    assert.equal(codeOf(toServiceFault(throttled, 'database')), Code.DatabaseUnavailable);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
    assert.equal(codeOf(toServiceFault(refused, 'database')), 4);
    const wrapped = Object.assign(new Error('request failed'), { cause: refused });
    assert.equal(codeOf(toServiceFault(wrapped, 'queue')), 4);
    const serverError = Object.assign(new Error('oops'), {
      name: 'Unknown',
      $metadata: { httpStatusCode: 503 },
    });
    assert.equal(codeOf(toServiceFault(serverError, 'object storage')), 4);
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    assert.equal(codeOf(toServiceFault(timeout, 'database')), 4);
  });

  it('maps a cancelled transaction to 5', () => {
    const cancelled = new TransactionCanceledException({ message: 'cancelled', ...metadata });
    assert.equal(codeOf(toServiceFault(cancelled, 'database')), Code.CommitFailed);
  });

  it('leaves everything else untouched (it becomes code 2 later) and passes service errors through', () => {
    const condition = new ConditionalCheckFailedException({ message: 'condition', ...metadata });
    assert.equal(toServiceFault(condition, 'database'), condition, 'callers handle conditional failures');
    const bug = new TypeError('x is undefined');
    assert.equal(toServiceFault(bug, 'database'), bug);
    const clientError = Object.assign(new Error('bad'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
    assert.equal(toServiceFault(clientError, 'object storage'), clientError);
    const known = new ServiceError(Code.NotFound);
    assert.equal(toServiceFault(known, 'database'), known);
    assert.equal(toServiceFault(undefined, 'database'), undefined);
  });

  it('maps a DynamoDB ValidationException (e.g. an item over 400 KB) to 111, never 2', () => {
    const tooLarge = Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
    const mapped = toServiceFault(tooLarge, 'database');
    assert.ok(mapped instanceof ServiceError);
    assert.equal(mapped.code, Code.MethodValidation);
    assert.equal(mapped.cause, tooLarge);
  });

  it('translates inside guarded() and keeps the cause for the log', async () => {
    const original = new ResourceNotFoundException({ message: 'no table', ...metadata });
    await assert.rejects(
      guarded('database', async () => {
        throw original;
      }),
      (error: unknown) => isServiceError(error) && error.code === 3 && error.cause === original,
    );
    assert.equal(await guarded('database', async () => 42), 42);
  });

  it('answers 3 when TABLE_NAME is empty', () => {
    const saved = process.env.TABLE_NAME;
    process.env.TABLE_NAME = '  ';
    try {
      assert.throws(
        tableName,
        (error: unknown) => isServiceError(error) && error.code === Code.DatabaseNotConfigured,
      );
    } finally {
      if (saved === undefined) delete process.env.TABLE_NAME;
      else process.env.TABLE_NAME = saved;
    }
  });
});
