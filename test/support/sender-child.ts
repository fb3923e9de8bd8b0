import type { SQSEvent } from 'aws-lambda';
import { sqsRecord } from './sqs-record.ts';

/**
 * A sender function instance in its own process, so a test can kill it mid-batch (SIGKILL, as when
 * Lambda's sandbox dies). Runs the real handler on one SQS batch of the uuids given as arguments,
 * with the environment it inherits (the test host's stores, the SMTP_URL the test chose).
 */
const uuids = process.argv.slice(2);
const { handler } = await import('../../functions/sender/handler.ts');
const event: SQSEvent = { Records: uuids.map((uuid) => sqsRecord(uuid)) };
const result = await handler(event);
process.stdout.write(`${JSON.stringify(result)}\n`);
