import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { FairScheduler } from './fair-dispatch.ts';
import { loadFunction } from './function-code.ts';
import { timedInvocation } from './invocations.ts';
import { lambdaContext } from './lambda-context.ts';

/**
 * What Lambda's SQS event source mapping does, in front of an SQS fair queue, for the local host:
 * receive from a queue, hand the function real SQS event batches (messageId, receiptHandle, body,
 * attributes with ApproximateReceiveCount and MessageGroupId…), delete the records it did not report
 * in `batchItemFailures`, and leave the rest (or the whole batch, when the function throws) to the
 * visibility timeout and, after maxReceiveCount, the queue's redrive to its dead-letter queue.
 *
 * Fairness (docs/decisions/0024-multi-tenant-fairness.md): like an SQS fair queue, fauxqs (patched)
 * hands out first the messages of the tenant with the fewest in flight, so a quiet tenant's message
 * comes out in the first receive after it arrives, however long a noisy tenant's backlog. Lambda's
 * invocations are the other half: this loop keeps receiving (up to `maxWaiting` messages, kept
 * hidden on the queue while they wait, so they count as in flight) and a `FairScheduler` picks which
 * tenant's messages run next: a tenant with invocations running never takes the last free one, and
 * the tenant with the fewest running goes first.
 */
export interface EventSourceOptions {
  queueUrl: string;
  /** functions/<id>/handler.ts, or a handler function (tests). */
  functionId?: string;
  handler?: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;
  batchSize?: number;
  /** Invocations at once, like the mapping's maximum concurrency. */
  pollers?: number;
  /** Invocations kept for tenants with none running (default 1 when `pollers` ≥ 2). */
  reserve?: number;
  /** Received messages waiting for an invocation, at most (the loop stops receiving beyond). */
  maxWaiting?: number;
  waitTimeSeconds?: number;
  timeoutMs?: number;
  region?: string;
  onError?: (error: unknown) => void;
}

export interface EventSource {
  stop(): Promise<void>;
}

interface Received {
  message: Message;
  /** When the message becomes visible on the queue again unless it is kept hidden. */
  visibleAt: number;
}

/** The tenant of a message: its MessageGroupId, or itself (SQS fair queues' rule for one without). */
export function groupOf(message: Message): string {
  return message.Attributes?.MessageGroupId ?? `message:${message.MessageId}`;
}

export function startEventSource(options: EventSourceOptions): EventSource {
  // fauxqs names queues by a host the SDK cannot parse; the configured endpoint is the right one.
  const client = new SQSClient({ useQueueUrlAsEndpoint: false });
  const abort = new AbortController();
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxWaiting = options.maxWaiting ?? 20_000;
  const scheduler = new FairScheduler<Received>({
    slots: options.pollers ?? 1,
    batchSize: options.batchSize ?? 10,
    ...(options.reserve === undefined ? {} : { reserve: options.reserve }),
  });
  const invocations = new Set<Promise<void>>();
  let running = true;
  let wake: (() => void) | undefined;
  const woken = () => new Promise<void>((resolve) => (wake = resolve));
  const signal = () => {
    wake?.();
    wake = undefined;
  };

  let handler: Promise<(event: SQSEvent) => Promise<SQSBatchResponse | undefined>> | undefined;
  const getHandler = () => {
    handler ??= options.handler
      ? Promise.resolve(options.handler)
      : loadFunction<(event: SQSEvent) => Promise<SQSBatchResponse | undefined>>(
          options.functionId as string,
        );
    return handler;
  };

  let queue: { arn: string; visibilitySeconds: number } | undefined;
  const describe = async () => {
    if (queue !== undefined) return queue;
    const attributes = (
      await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: options.queueUrl,
          AttributeNames: ['QueueArn', 'VisibilityTimeout'],
        }),
        { abortSignal: abort.signal },
      )
    ).Attributes;
    queue = {
      arn: attributes?.QueueArn ?? `arn:aws:sqs:${region}:000000000000:local`,
      visibilitySeconds: Number(attributes?.VisibilityTimeout ?? 30),
    };
    return queue;
  };

  const changeVisibility = async (entries: Received[], seconds: number): Promise<void> => {
    for (let start = 0; start < entries.length; start += 10) {
      const slice = entries.slice(start, start + 10);
      await client
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: slice.map((entry, index) => ({
              Id: String(index),
              ReceiptHandle: entry.message.ReceiptHandle as string,
              VisibilityTimeout: seconds,
            })),
          }),
        )
        .catch((error: unknown) => options.onError?.(error));
      for (const entry of slice) entry.visibleAt = Date.now() + seconds * 1000;
    }
  };

  const receive = async (): Promise<void> => {
    while (running) {
      try {
        const { arn, visibilitySeconds } = await describe();
        if (scheduler.waiting >= maxWaiting) {
          await woken();
          continue;
        }
        const received = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: 10,
            // While messages wait anyway, look for more without waiting; else long-poll.
            WaitTimeSeconds: scheduler.waiting > 0 ? 0 : (options.waitTimeSeconds ?? 5),
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = received.Messages ?? [];
        const visibleAt = Date.now() + visibilitySeconds * 1000;
        for (const message of messages) scheduler.add(groupOf(message), { message, visibleAt });
        if (messages.length > 0) dispatch(arn, visibilitySeconds);
        else if (scheduler.waiting > 0) await Promise.race([woken(), pause(200)]);
      } catch (error) {
        if (!running) return;
        options.onError?.(error);
        await pause(500);
      }
    }
  };

  /** Starts every invocation the scheduler allows now. */
  const dispatch = (arn: string, visibilitySeconds: number): void => {
    for (let batch = scheduler.next(); batch !== undefined; batch = scheduler.next()) {
      const { group, items } = batch;
      const invocation = (async () => {
        // Lambda receives a batch and invokes at once: give it the full visibility timeout.
        const stale = items.filter((item) => item.visibleAt - Date.now() < (visibilitySeconds * 1000) / 2);
        if (stale.length > 0) await changeVisibility(stale, visibilitySeconds);
        await invoke(
          items.map((item) => item.message),
          arn,
        );
      })()
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          scheduler.done(group);
          invocations.delete(invocation);
          if (running) dispatch(arn, visibilitySeconds);
          signal();
        });
      invocations.add(invocation);
    }
  };

  const aborted = new Promise<void>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve(), { once: true }),
  );

  /** Keeps waiting messages hidden on the queue, as they would be in SQS until a consumer gets them. */
  const keepHidden = async (): Promise<void> => {
    while (running) {
      await Promise.race([pause(250), aborted]);
      if (!running || queue === undefined) continue;
      const { visibilitySeconds } = queue;
      const margin = Math.min(30_000, (visibilitySeconds * 1000) / 3);
      const due = scheduler.waitingItems().filter((item) => item.visibleAt - Date.now() < margin);
      if (due.length > 0) await changeVisibility(due, visibilitySeconds);
    }
  };

  const invoke = async (messages: Message[], arn: string): Promise<void> => {
    const event: SQSEvent = { Records: messages.map((message) => toRecord(message, arn, region)) };
    let response: SQSBatchResponse | undefined;
    try {
      const fn = await getHandler();
      const requestId = crypto.randomUUID();
      const functionId = options.functionId ?? 'sqs-consumer';
      response = await timedInvocation(functionId, () =>
        withTimeout(
          (fn as unknown as (e: SQSEvent, c: unknown) => Promise<SQSBatchResponse | undefined>)(
            event,
            lambdaContext(functionId, requestId, timeoutMs),
          ),
          timeoutMs,
        ),
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

  const loops = [receive(), keepHidden()];
  return {
    async stop() {
      running = false;
      abort.abort();
      signal();
      await Promise.allSettled(loops);
      await Promise.allSettled([...invocations]);
      client.destroy();
    },
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
      ...(attributes.MessageGroupId === undefined ? {} : { MessageGroupId: attributes.MessageGroupId }),
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
