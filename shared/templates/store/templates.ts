import { randomBytes } from 'node:crypto';
import { type DomainRecord, normaliseDomain, toDomain } from '../../domains/index.ts';
import { deleteObjects, getObjectBytes, putObjects } from '../../platform/objects/objects.ts';
import { batchGetItems } from '../../platform/table/batch-get.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { TemplateParts } from '../model/render.ts';
import type { TemplateHead, VersionRecord } from '../model/template.ts';

/**
 * Template storage (docs/data-model.md, "Templates"): the template record and the account's
 * template counter in the account's partition (listed with one Query, counted in the same
 * transaction that adds or deletes, so 1,000 per account holds under concurrency); each version's
 * small record in the template's own partition; each version's parts (up to 500 KB, more than a
 * DynamoDB item may hold) as one JSON object in S3 under `templates/`, written before the record
 * that points at it and never changed.
 */
export const templateKeys = {
  counter: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'TEMPLATES' }),
  head: (accountId: string, alias: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `TEMPLATE#${alias}` }),
  headPrefix: 'TEMPLATE#',
  versions: (templateId: string) => `TEMPLATE#${templateId}`,
  version: (templateId: string, version: number) => ({
    pk: `TEMPLATE#${templateId}`,
    sk: `VERSION#${String(version).padStart(6, '0')}`,
  }),
  /** A new key per write, so two racing updates never write the same object. */
  object: (templateId: string, version: number) =>
    `templates/${templateId}/${version}-${randomBytes(6).toString('hex')}.json`,
} as const;

export const templateObjectPrefix = 'templates/';

function toHead(item: Record<string, unknown>): TemplateHead {
  const published = item.published_versions;
  return {
    accountId: String(item.account_id),
    alias: String(item.alias),
    name: String(item.name),
    templateId: String(item.template_id),
    latestVersion: Number(item.latest_version),
    publishedVersion: typeof item.published_version === 'number' ? item.published_version : null,
    everPublished: published instanceof Set ? [...published].map(Number) : [],
    latestLayout: typeof item.latest_layout === 'string' ? item.latest_layout : null,
    publishedLayout: typeof item.published_layout === 'string' ? item.published_layout : null,
    createdAt: String(item.created_at),
    updatedAt: String(item.updated_at),
    revision: Number(item.revision ?? 0),
  };
}

/**
 * Every change of a template record counts its `revision` up and is conditional on the revision it
 * read, so of two concurrent changes one wins and the other is told to read again.
 */
const revisionValues = (head: TemplateHead) => ({
  ':id': head.templateId,
  ':read': head.revision,
  ':next': head.revision + 1,
});

function toVersion(item: Record<string, unknown>): VersionRecord {
  return {
    version: Number(item.version),
    createdAt: String(item.created_at),
    layoutAlias: typeof item.layout_alias === 'string' ? item.layout_alias : null,
    objectKey: String(item.object_key),
    bytes: Number(item.bytes ?? 0),
  };
}

const versionItem = (templateId: string, accountId: string, version: VersionRecord) => ({
  ...templateKeys.version(templateId, version.version),
  account_id: accountId,
  version: version.version,
  created_at: version.createdAt,
  ...(version.layoutAlias === null ? {} : { layout_alias: version.layoutAlias }),
  object_key: version.objectKey,
  bytes: version.bytes,
});

/** The template record; consistent, so a send right after a publish renders the new version. */
export async function getTemplateHead(accountId: string, alias: string): Promise<TemplateHead | undefined> {
  const item = await table.get(templateKeys.head(accountId, alias), { ConsistentRead: true });
  return item === undefined ? undefined : toHead(item);
}

/**
 * The template record and a sending domain's record in one BatchGetItem, both consistent: what a
 * message with a template reads before it is accepted, in one round trip instead of two.
 */
export async function getTemplateHeadAndDomain(
  accountId: string,
  alias: string,
  domain: string,
): Promise<{ head: TemplateHead | undefined; domain: DomainRecord | undefined }> {
  const headKey = templateKeys.head(accountId, alias);
  const domainKey = keys.domain(normaliseDomain(domain));
  const items = await batchGetItems([headKey, domainKey]);
  const find = (key: { pk: string; sk: string }) =>
    items.find((item) => item.pk === key.pk && item.sk === key.sk);
  const headItem = find(headKey);
  const domainItem = find(domainKey);
  return {
    head: headItem === undefined ? undefined : toHead(headItem),
    domain: domainItem === undefined ? undefined : toDomain(domainItem),
  };
}

/** How many templates the account has (its counter; a dry run of add checks the limit with it). */
export async function countTemplates(accountId: string): Promise<number> {
  const item = await table.get(templateKeys.counter(accountId), { ConsistentRead: true });
  return Number(item?.template_count ?? 0);
}

/** One page of an account's templates by alias; `after` is the last alias of the previous page. */
export async function listTemplateHeads(
  accountId: string,
  limit: number,
  after?: string,
): Promise<{ heads: TemplateHead[]; lastAlias: string | undefined }> {
  const key = templateKeys.head(accountId, after ?? '');
  const page = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': key.pk, ':prefix': templateKeys.headPrefix },
    ...(after === undefined ? {} : { ExclusiveStartKey: key }),
    Limit: limit,
  });
  const heads = page.items.map(toHead);
  return {
    heads,
    lastAlias: page.lastKey === undefined ? undefined : heads[heads.length - 1]?.alias,
  };
}

/** Every template of an account (at most 1,000 small records), for the layout-in-use check. */
export async function allTemplateHeads(accountId: string): Promise<TemplateHead[]> {
  const heads: TemplateHead[] = [];
  let after: string | undefined;
  do {
    const page = await listTemplateHeads(accountId, 1000, after);
    heads.push(...page.heads);
    after = page.lastAlias;
  } while (after !== undefined);
  return heads;
}

/** A template's versions (their records, not their parts), oldest first. */
export async function listVersions(templateId: string): Promise<VersionRecord[]> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': templateKeys.versions(templateId) },
    ConsistentRead: true,
  });
  return items.map(toVersion);
}

export async function getVersion(templateId: string, version: number): Promise<VersionRecord | undefined> {
  const item = await table.get(templateKeys.version(templateId, version), { ConsistentRead: true });
  return item === undefined ? undefined : toVersion(item);
}

/** Stores a version's parts (before its record is written). */
export async function putParts(key: string, parts: TemplateParts): Promise<void> {
  await putObjects([{ key, body: JSON.stringify(parts), contentType: 'application/json' }]);
}

export async function getParts(key: string): Promise<TemplateParts> {
  const parsed = JSON.parse((await getObjectBytes(key)).toString('utf8')) as Partial<TemplateParts>;
  return {
    subject: typeof parsed.subject === 'string' ? parsed.subject : '',
    html: typeof parsed.html === 'string' ? parsed.html : null,
    text: typeof parsed.text === 'string' ? parsed.text : null,
  };
}

/** Removes parts objects (after their records are gone, or when a write that made them failed). */
export async function deleteParts(keys: readonly string[]): Promise<void> {
  await deleteObjects(keys);
}

/**
 * Adds a template with its first version: the counter (below `max`), the record (new alias) and the
 * version record in one transaction.
 */
export async function createTemplate(
  head: TemplateHead,
  version: VersionRecord,
  max: number,
): Promise<'created' | 'exists' | 'limit'> {
  const outcome = await table.transact([
    {
      Update: {
        Key: templateKeys.counter(head.accountId),
        UpdateExpression:
          'SET template_count = if_not_exists(template_count, :zero) + :one, account_id = :account',
        ConditionExpression: 'attribute_not_exists(template_count) OR template_count < :max',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': max, ':account': head.accountId },
      },
    },
    {
      Put: {
        Item: {
          ...templateKeys.head(head.accountId, head.alias),
          account_id: head.accountId,
          alias: head.alias,
          name: head.name,
          template_id: head.templateId,
          latest_version: head.latestVersion,
          latest_layout: head.latestLayout,
          created_at: head.createdAt,
          updated_at: head.updatedAt,
          revision: head.revision,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { Item: versionItem(head.templateId, head.accountId, version) } },
  ]);
  if (outcome.outcome === 'applied') return 'created';
  return outcome.failed[0] === 0 ? 'limit' : 'exists';
}

/**
 * Adds a version after `head.latestVersion` (and renames when `name` is given), conditional on the
 * record being the one read: a concurrent update or publish makes it 'conflict' and the caller reads
 * again. `prune` is removed in the same transaction (the oldest unpublished version at the limit).
 */
export async function addVersion(
  head: TemplateHead,
  version: VersionRecord,
  options: { name: string; prune?: VersionRecord },
): Promise<'added' | 'conflict'> {
  const outcome = await table.transact([
    {
      Update: {
        Key: templateKeys.head(head.accountId, head.alias),
        UpdateExpression:
          'SET latest_version = :version, #name = :name, latest_layout = :layout, updated_at = :at, revision = :next',
        ConditionExpression: 'template_id = :id AND revision = :read',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: {
          ':version': version.version,
          ':name': options.name,
          ':layout': version.layoutAlias,
          ':at': version.createdAt,
          ...revisionValues(head),
        },
      },
    },
    {
      Put: {
        Item: versionItem(head.templateId, head.accountId, version),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...(options.prune === undefined
      ? []
      : [
          {
            Delete: {
              Key: templateKeys.version(head.templateId, options.prune.version),
            },
          },
        ]),
  ]);
  return outcome.outcome === 'applied' ? 'added' : 'conflict';
}

/** Renames a template (no new version), conditional on the record being the one read. */
export async function renameTemplate(
  head: TemplateHead,
  name: string,
  at: string,
): Promise<'renamed' | 'conflict'> {
  const result = await table.update({
    Key: templateKeys.head(head.accountId, head.alias),
    UpdateExpression: 'SET #name = :name, updated_at = :at, revision = :next',
    ConditionExpression: 'template_id = :id AND revision = :read',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: { ':name': name, ':at': at, ...revisionValues(head) },
  });
  return result.outcome === 'applied' ? 'renamed' : 'conflict';
}

/**
 * Makes `version` the published one, conditional on the record being the one read and on the
 * version still existing (a concurrent update may have removed it at the version limit).
 */
export async function publishVersion(
  head: TemplateHead,
  version: VersionRecord,
  at: string,
): Promise<'published' | 'conflict'> {
  const outcome = await table.transact([
    {
      ConditionCheck: {
        Key: templateKeys.version(head.templateId, version.version),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    {
      Update: {
        Key: templateKeys.head(head.accountId, head.alias),
        UpdateExpression:
          'SET published_version = :version, published_layout = :layout, updated_at = :at, revision = :next ADD published_versions :set',
        ConditionExpression: 'template_id = :id AND revision = :read',
        ExpressionAttributeValues: {
          ':version': version.version,
          ':layout': version.layoutAlias,
          ':set': new Set([version.version]),
          ':at': at,
          ...revisionValues(head),
        },
      },
    },
  ]);
  return outcome.outcome === 'applied' ? 'published' : 'conflict';
}

/** Deletes the record and counts it off, conditional on the record being the one read. */
export async function deleteTemplateHead(head: TemplateHead): Promise<'deleted' | 'conflict'> {
  const outcome = await table.transact([
    {
      Delete: {
        Key: templateKeys.head(head.accountId, head.alias),
        ConditionExpression: 'template_id = :id AND revision = :read',
        ExpressionAttributeValues: { ':id': head.templateId, ':read': head.revision },
      },
    },
    {
      Update: {
        Key: templateKeys.counter(head.accountId),
        UpdateExpression: 'SET template_count = template_count - :one',
        ConditionExpression: 'template_count > :zero',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      },
    },
  ]);
  return outcome.outcome === 'applied' ? 'deleted' : 'conflict';
}

/**
 * Removes version records (a deleted template's), a few at a time with DeleteItem: a template keeps at
 * most 100 versions, and the functions that delete hold no BatchWriteItem grant.
 */
export async function deleteVersionRecords(
  templateId: string,
  versions: readonly VersionRecord[],
): Promise<void> {
  for (let start = 0; start < versions.length; start += 10) {
    await Promise.all(
      versions
        .slice(start, start + 10)
        .map((version) => table.delete({ Key: templateKeys.version(templateId, version.version) })),
    );
  }
}
