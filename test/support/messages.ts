import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { registerDomain } from '../../shared/domains/registry.ts';
import { firstWatchAt } from '../../shared/messages/config.ts';
import { indexChangeFor, isInFlight } from '../../shared/messages/store/message-index.ts';
import { readState } from '../../shared/messages/store/message-state.ts';
import { dynamo, s3 } from '../../shared/platform/aws/clients.ts';
import { bucketName, tableName } from '../../shared/platform/config/storage.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from './host.ts';

/** An account with its own sending domain and a token with every scope. */
export interface TestAccount {
  account: string;
  domain: string;
  token: string;
  sender: string;
}

export async function newAccount(prefix = 'msg'): Promise<TestAccount> {
  useHostEnvironment();
  const account = uniqueAccount(prefix);
  const domain = uniqueDomain(prefix);
  await registerDomain(domain, account);
  return { account, domain, token: await mintToken({ account }), sender: `noreply@${domain}` };
}

export function textMessage(who: TestAccount, extra: Record<string, unknown> = {}) {
  return {
    message_sender: who.sender,
    to: ['Ada <ada@recipient.test>'],
    subject: 'Hello',
    content: { kind: 'text_only', text: 'Hi there' },
    ...extra,
  };
}

export async function add(
  who: TestAccount,
  body: unknown,
  options: { query?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  return call('POST', '/message/add-1.0', { token: who.token, body, ...options });
}

export async function query(who: TestAccount, body: unknown) {
  return call('POST', '/message/query-1.0', { token: who.token, body });
}

export async function remove(who: TestAccount, uuids: string[], query?: Record<string, string>) {
  return call('POST', '/message/delete-1.0', {
    token: who.token,
    body: { message_uuids: uuids },
    ...(query ? { query } : {}),
  });
}

/** Creates a message and returns its uuid. */
export async function created(who: TestAccount, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await add(who, textMessage(who, extra));
  if (response.status !== 200) throw new Error(`add failed: ${response.text}`);
  return response.body.data.message_uuid as string;
}

export const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

/**
 * The raw stored item, index attributes included (arranging and inspecting state directly), with
 * its compressed state (`st`: recipients, history, relay, composition) decoded beside it.
 */
export async function rawItem(uuid: string): Promise<Record<string, any> | undefined> {
  useHostEnvironment();
  const result = await dynamo().send(
    new GetCommand({ TableName: tableName(), Key: keys.message(uuid), ConsistentRead: true }),
  );
  return result.Item === undefined ? undefined : { ...result.Item, ...readState(result.Item).state };
}

/**
 * Moves a message to `to` the way the delivery pipeline does: one conditional update of the status
 * and its index key. Resolves true when the condition (`status = from`) held. `indexedAs` keeps the
 * index keys of another status: an index that has not caught up with the item (as a list sees it
 * that read the index just before the move).
 */
export async function forceStatus(
  uuid: string,
  to: string,
  from?: string,
  options: { indexedAs?: string } = {},
): Promise<boolean> {
  useHostEnvironment();
  const item = await rawItem(uuid);
  if (item === undefined) return false;
  // The index keys follow the status, as every write of the service keeps them (keys.ts).
  const change = indexChangeFor(
    {
      message_uuid: uuid,
      account_id: item.account_id,
      created_at: item.created_at,
      status: options.indexedAs ?? to,
      // Put in flight now: watched as the service would watch it.
      ...(isInFlight(options.indexedAs ?? to) ? { watch_at: firstWatchAt(Date.now()) } : {}),
      ...(item.scheduling?.send_at === undefined ? {} : { send_at: item.scheduling.send_at }),
    },
    [from ?? item.status],
  );
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.message(uuid),
        UpdateExpression: `SET ${['#status = :to', ...Object.keys(change.set).map((name) => `${name} = :${name}`)].join(', ')}${change.remove.length > 0 ? ` REMOVE ${change.remove.join(', ')}` : ''}`,
        ConditionExpression: from === undefined ? 'attribute_exists(pk)' : '#status = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':to': to,
          ...Object.fromEntries(Object.entries(change.set).map(([name, value]) => [`:${name}`, value])),
          ...(from === undefined ? {} : { ':from': from }),
        },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Does the object exist in the bucket? */
export async function objectExists(key: string): Promise<boolean> {
  useHostEnvironment();
  try {
    await s3().send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
    return true;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404) return false;
    throw error;
  }
}

/** Runs `work` over `items` with at most `limit` at a time, results in order (the service's own). */
export { mapLimit } from '../../shared/platform/concurrency/map-limit.ts';

/** Every page of a filtered query, following `next_cursor` to the end (each answer must be 200). */
export async function pageThrough(who: TestAccount, filters: Record<string, unknown>): Promise<any[]> {
  const pages: any[] = [];
  let cursor: string | null | undefined;
  do {
    const response = await query(who, cursor === undefined ? { filters } : { filters, cursor });
    if (response.status !== 200) throw new Error(`query failed: ${response.text}`);
    pages.push(response.body.data);
    cursor = response.body.data.next_cursor;
    if (pages.length >= 200) throw new Error('paging does not end');
  } while (cursor !== null);
  return pages;
}
