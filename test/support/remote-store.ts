import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../shared/platform/table/keys.ts';
import type { SecondaryHost } from './secondary-host.ts';

/**
 * Direct access to a secondary host's own emulators (not through the proxies its handlers may be
 * configured with), to inspect what was really written, and the operator command against it.
 */
const projectRoot = join(import.meta.dirname, '..', '..');
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface RemoteStore {
  messagesOf(account: string): Promise<Array<Record<string, any>>>;
  message(uuid: string): Promise<Record<string, any> | undefined>;
  objectExists(key: string): Promise<boolean>;
  close(): void;
}

export function remoteStore(host: SecondaryHost): RemoteStore {
  const table = host.env.TABLE_NAME as string;
  const bucket = host.env.BUCKET_NAME as string;
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: host.dynamo.endpoint, region: 'us-east-1', credentials }),
  );
  const s3 = new S3Client({
    endpoint: host.sqsS3.endpoint,
    region: 'us-east-1',
    credentials,
    forcePathStyle: true,
  });
  return {
    async messagesOf(account) {
      const items: Array<Record<string, any>> = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new ScanCommand({
            TableName: table,
            FilterExpression: 'account_id = :account AND attribute_exists(message_uuid)',
            ExpressionAttributeValues: { ':account': account },
            ExclusiveStartKey: start,
            ConsistentRead: true,
          }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return items.filter((item) => typeof item.pk === 'string' && item.pk.startsWith('MESSAGE#'));
    },
    async message(uuid) {
      const result = await db.send(
        new GetCommand({ TableName: table, Key: keys.message(uuid), ConsistentRead: true }),
      );
      return result.Item;
    },
    async objectExists(key) {
      try {
        await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (error) {
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
          return false;
        throw error;
      }
    },
    close() {
      db.destroy();
      s3.destroy();
    },
  };
}

/** Every S3 key a message item names: its one content object, unless its bodies are inline. */
export function partKeys(item: Record<string, any>): string[] {
  return item.content?.store === 's3' ? [String(item.content.key)] : [];
}

/**
 * `npm run admin -- domains add <domain> --account <account>` against the secondary host. Not
 * synchronous: the host may reach its stores through proxies running in this very process.
 */
export function registerDomainOn(host: SecondaryHost, domain: string, account: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        'infra/admin/cli.ts',
        'domains',
        'add',
        domain,
        '--account',
        account,
      ],
      { cwd: projectRoot, env: { ...process.env, ...host.env } },
      (error, _stdout, stderr) => (error ? reject(new Error(`admin failed: ${stderr}`)) : resolve()),
    );
  });
}

/** SMTP transactions per message uuid at a host's local MTA (`<DATA_DIR>/outbox/transactions.jsonl`). */
export function transactionsByMessage(dataDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const file = join(dataDir, 'outbox', 'transactions.jsonl');
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const uuid = (JSON.parse(line) as { message_uuid: string }).message_uuid;
    counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  }
  return counts;
}
