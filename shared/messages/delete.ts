import { mapLimit } from '../platform/concurrency/map-limit.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { isServiceError, ServiceError } from '../platform/errors/service-error.ts';
import { deleteObjects } from '../platform/objects/objects.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { objectKeysOf } from './model/message.ts';
import { isProtected } from './model/statuses.ts';
import { searchEntriesOf } from './store/message-index.ts';
import { deleteMessage, deleteMessageParts, getMessages } from './store/messages.ts';

export interface DeleteReport {
  deleted: string[];
  not_found: string[];
  unauthorized: string[];
  protected: string[];
  dry_run?: true;
}

type Outcome = 'deleted' | 'not_found' | 'unauthorized' | 'protected';

const concurrency = 16;

/**
 * When some deletes failed (the database went away mid-batch), the answer is that failure's code,
 * and its details still say, per id, exactly what happened: `deleted` (gone, objects removed),
 * `not_found` / `unauthorized` / `protected`, or `not deleted: retry`.
 */
function partialFailure(
  ids: readonly string[],
  outcomes: ReadonlyMap<string, Outcome>,
  failures: ReadonlyMap<string, unknown>,
): ServiceError {
  const first = [...failures.values()][0];
  const code = isServiceError(first) ? first.code : Code.DatabaseUnavailable;
  const deleted = ids.filter((id) => outcomes.get(id) === 'deleted').length;
  log('error', 'message delete failed for part of a batch', {
    failed: failures.size,
    deleted,
    ...describeError(first),
  });
  return new ServiceError(
    code,
    `${failures.size} of ${ids.length} messages could not be deleted; ${deleted} were deleted (see details); retry the others`,
    {
      cause: first,
      details: ids.map((id, index) => ({
        field: `message_uuids[${index}]`,
        message: failures.has(id) ? `${id}: not deleted: retry` : `${id}: ${outcomes.get(id) ?? 'not_found'}`,
      })),
    },
  );
}

/**
 * POST /message/delete-1.0. Ids are lower-cased and de-duplicated (first occurrence wins), and each
 * lands in exactly one list, in request order. Each delete is conditional (exists, owned, not
 * protected); the content items, search entries and S3 objects of deleted messages are removed
 * afterwards. A dry run reads instead.
 */
export async function deleteMessages(
  uuids: readonly string[],
  account: string,
  dryRun: boolean,
): Promise<DeleteReport> {
  const ids = [...new Set(uuids.map((uuid) => uuid.toLowerCase()))];
  const outcomes = new Map<string, Outcome>();
  const objectKeys: string[] = [];
  const parts: Array<Parameters<typeof deleteMessageParts>[0][number]> = [];
  if (dryRun) {
    const found = await getMessages(ids);
    for (const id of ids) {
      const item = found.get(id);
      outcomes.set(
        id,
        item === undefined
          ? 'not_found'
          : item.account_id !== account
            ? 'unauthorized'
            : isProtected(item.status)
              ? 'protected'
              : 'deleted',
      );
    }
  } else {
    const failures = new Map<string, unknown>();
    await mapLimit(ids, concurrency, async (id) => {
      try {
        const result = await deleteMessage(id, account);
        outcomes.set(id, result.outcome);
        if (result.outcome === 'deleted') {
          objectKeys.push(...objectKeysOf(result.item));
          // Its search entries, the content item among them.
          parts.push({ entries: searchEntriesOf(result.item) });
          log('info', 'message state', { message_uuid: id, account, status: 'deleted', event: 'delete' });
        }
      } catch (error) {
        // One failed delete stops neither the others nor the object clean-up below.
        failures.set(id, error);
      }
    });
    if (parts.length > 0) {
      await deleteMessageParts(parts).catch((error: unknown) =>
        log('error', 'deleting message content items and search entries failed', {
          account,
          messages: parts.length,
          ...describeError(error),
        }),
      );
    }
    if (objectKeys.length > 0) {
      await deleteObjects(objectKeys).catch((error: unknown) =>
        log('error', 'deleting message objects failed', {
          account,
          objects: objectKeys.length,
          ...describeError(error),
        }),
      );
    }
    if (failures.size > 0) throw partialFailure(ids, outcomes, failures);
  }
  const report: DeleteReport = { deleted: [], not_found: [], unauthorized: [], protected: [] };
  for (const id of ids) report[outcomes.get(id) ?? 'not_found'].push(id);
  if (dryRun) report.dry_run = true;
  return report;
}
