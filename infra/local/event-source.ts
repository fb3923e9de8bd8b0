import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from './lambda-context.ts';

/**
 * What Lambda's SQS event source mapping does, for the local host: long-poll a queue, hand the
 * function real SQS event batches (messageId, receiptHandle, body, attributes with
 * ApproximateReceiveCount…), delete the records it did not report in `batchItemFailures`, and leave
 * the rest (or the whole batch, when the function throws) to the visibility timeout and, after
 * maxReceiveCount, the queue's redrive to its dead-letter queue.
 */
export interface EventSourceOptions {
  queueUrl: string;
  /** functions/<id>/handler.ts, or a handler function (tests). */
  functionId?: string;
  handler?: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;
  batchSize?: number;
  /** Parallel pollers, like the mapping's concurrency. */
  pollers?: number;
  waitTimeSeconds?: number;
  timeoutMs?: number;
  region?: string;
  onError?: (error: unknown) => void;
}

export interface EventSource {
  stop(): Promise<void>;
}

const projectRoot = join(import.meta.dirname, '..', '..');

export async function loadFunction<T>(functionId: string): Promise<T> {
  const module = (await import(
    pathToFileURL(join(projectRoot, 'functions', functionId, 'handler.ts')).href
  )) as {
    handler: T;
  };
  return module.handler;
}

export function startEventSource(options: EventSourceOptions): EventSource {
  // fauxqs names queues by a host the SDK cannot parse; the configured endpoint is the right one.
  const client = new SQSClient({ useQueueUrlAsEndpoint: false });
  const abort = new AbortController();
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  let running = true;
  let handler: Promise<(event: SQSEvent) => Promise<SQSBatchResponse | undefined>> | undefined;
  const getHandler = () => {
    handler ??= options.handler
      ? Promise.resolve(options.handler)
      : loadFunction<(event: SQSEvent) => Promise<SQSBatchResponse | undefined>>(
          options.functionId as string,
        );
    return handler;
  };
  let queueArn: string | undefined;

  const poll = async (): Promise<void> => {
    while (running) {
      try {
        queueArn ??=
          (
            await client.send(
              new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }),
              { abortSignal: abort.signal },
            )
          ).Attributes?.QueueArn ?? `arn:aws:sqs:${region}:000000000000:local`;
        const received = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: options.waitTimeSeconds ?? 5,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = received.Messages ?? [];
        if (messages.length === 0) continue;
        await invoke(messages, queueArn);
      } catch (error) {
        if (!running) return;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };

  const invoke = async (messages: Message[], arn: string): Promise<void> => {
    const event: SQSEvent = { Records: messages.map((message) => toRecord(message, arn, region)) };
    let response: SQSBatchResponse | undefined;
    try {
      const fn = await getHandler();
      const requestId = crypto.randomUUID();
      response = await withTimeout(
        (fn as unknown as (e: SQSEvent, c: unknown) => Promise<SQSBatchResponse | undefined>)(
          event,
          lambdaContext(options.functionId ?? 'sqs-consumer', requestId, options.timeoutMs ?? 30_000),
        ),
        options.timeoutMs ?? 30_000,
      );
    } catch (error) {
      // The whole batch stays on the queue and comes back after the visibility timeout.
      options.onError?.(error);
      return;
    }
    const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    const done = messages.filter((message) => !failed.has(message.MessageId as string));
    for (let start = 0; start < done.length; start += 10) {
      const slice = done.slice(start, start + 10);
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: slice.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle as string,
          })),
        }),
      );
    }
  };

  const loops = Array.from({ length: options.pollers ?? 1 }, () => poll());
  return {
    async stop() {
      running = false;
      abort.abort();
      await Promise.allSettled(loops);
      client.destroy();
    },
  };
}

function toRecord(message: Message, arn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`function timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
