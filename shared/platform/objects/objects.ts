import { guarded } from '../aws/faults.ts';
import { bucketName } from '../config/storage.ts';

/**
 * A message's stored object in S3 (its bodies and attachments, back to back). Most messages need
 * none: text, HTML and EML that compress to at most `contentItemLimit` (6 KB), without attachments,
 * live in a DynamoDB content item. So add, delete and the sender load the S3 client (with its
 * checksums, XML protocol and S3 middleware, a large share of a bundle) with an `import()` on
 * the first message that has an object, a chunk of its own in the split bundle (infra/bundling.ts),
 * rather than at every cold start. An instance whose first message has an object pays that load on
 * that message instead (docs/decisions/0010-bundle-budget.md).
 */
/** One object to store: its key, its bytes, and how it is served. */
export interface StoredObject {
  key: string;
  body: Uint8Array | string;
  contentType: string;
  /** Served as a download under this file name (Content-Disposition: attachment). */
  downloadAs?: string;
}

const store = () => import('./object-store.ts');
type ObjectStore = Awaited<ReturnType<typeof store>>;

/** One call to the S3 half, with the configured bucket, its failures mapped to the catalogue. */
function inStore<T>(call: (objectStore: ObjectStore, bucket: string) => Promise<T>): Promise<T> {
  const bucket = bucketName();
  return guarded('object storage', async () => call(await store(), bucket));
}

export async function putObjects(objects: readonly StoredObject[]): Promise<void> {
  if (objects.length === 0) return;
  await inStore((objectStore, bucket) => objectStore.putObjects(bucket, objects));
}

export async function deleteObjects(objectKeys: readonly string[]): Promise<void> {
  if (objectKeys.length === 0) return;
  await inStore((objectStore, bucket) => objectStore.deleteObjects(bucket, objectKeys));
}

export async function getObjectBytes(key: string): Promise<Buffer> {
  return inStore((objectStore, bucket) => objectStore.getObjectBytes(bucket, key));
}

/** A time-limited GET URL of a message object. */
export async function presignObject(key: string, expiresInSeconds: number): Promise<string> {
  return inStore((objectStore, bucket) => objectStore.presignGet(bucket, key, expiresInSeconds));
}
