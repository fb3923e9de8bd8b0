import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { guarded } from '../../platform/aws/faults.ts';
import { s3 } from '../../platform/aws/s3.ts';
import { bucketName } from '../../platform/config/storage.ts';
import { type AvatarOrigin, avatarPrefix, formatExpiry, parseExpiry } from '../model/avatars.ts';

/**
 * The avatar cache in S3: one object per address hash and size under `avatars/`, its expiry in the
 * object's metadata (`x-amz-meta-expires-at`, epoch seconds). S3 has no per-object TTL, so
 * housekeeping (keepalive) deletes expired entries; the read path ignores them meanwhile.
 */

export interface CachedAvatar {
  key: string;
  contentType: string;
  expiresAt: Date | undefined;
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'NotFound' || name === 'NoSuchKey';
}

/** The entry's metadata, or undefined when there is none. */
export async function headAvatar(key: string): Promise<CachedAvatar | undefined> {
  try {
    const head = await guarded('object storage', () =>
      s3().send(new HeadObjectCommand({ Bucket: bucketName(), Key: key })),
    );
    return {
      key,
      contentType: head.ContentType ?? 'application/octet-stream',
      expiresAt: parseExpiry(head.Metadata?.['expires-at']),
    };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export interface AvatarEntry {
  key: string;
  contentType: string;
  bytes: Uint8Array;
  expiresAt: Date;
  origin: AvatarOrigin;
}

export async function putAvatar(entry: AvatarEntry): Promise<void> {
  await guarded('object storage', () =>
    s3().send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: entry.key,
        Body: entry.bytes,
        ContentType: entry.contentType,
        CacheControl: 'private, max-age=3600',
        Metadata: { 'expires-at': formatExpiry(entry.expiresAt), origin: entry.origin },
      }),
    ),
  );
}

/** A GET URL for the object that any HTTP client can fetch until it expires. */
export async function presignAvatar(key: string, expiresInSeconds: number): Promise<string> {
  return guarded('object storage', () =>
    getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucketName(), Key: key }), {
      expiresIn: expiresInSeconds,
    }),
  );
}

export interface ListedAvatar {
  key: string;
  lastModified: Date | undefined;
}

/** One page of cache keys in key order, strictly after `startAfter`. */
export async function listAvatars(
  startAfter: string | undefined,
  pageSize: number,
): Promise<{ items: ListedAvatar[]; more: boolean }> {
  const page = await guarded('object storage', () =>
    s3().send(
      new ListObjectsV2Command({
        Bucket: bucketName(),
        Prefix: avatarPrefix,
        StartAfter: startAfter,
        MaxKeys: pageSize,
      }),
    ),
  );
  const items = (page.Contents ?? [])
    .filter((item) => item.Key !== undefined)
    .map((item) => ({ key: item.Key as string, lastModified: item.LastModified }));
  return { items, more: page.IsTruncated === true };
}

/** Deletes up to 1000 keys in one call; returns the keys S3 reported as not deleted. */
export async function deleteAvatars(keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const result = await guarded('object storage', () =>
    s3().send(
      new DeleteObjectsCommand({
        Bucket: bucketName(),
        Delete: { Objects: keys.map((key) => ({ Key: key })), Quiet: true },
      }),
    ),
  );
  return (result.Errors ?? []).map((error) => error.Key ?? '');
}

/** Where housekeeping resumes: outside `avatars/` so it is never listed as an entry. */
const cursorKey = 'housekeeping/avatars-cursor.json';

export async function readHousekeepingCursor(): Promise<string | undefined> {
  try {
    const object = await guarded('object storage', () =>
      s3().send(new GetObjectCommand({ Bucket: bucketName(), Key: cursorKey })),
    );
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    const cursor = (JSON.parse(text) as { start_after?: unknown }).start_after;
    return typeof cursor === 'string' && cursor.startsWith(avatarPrefix) ? cursor : undefined;
  } catch (error) {
    if (isNotFound(error) || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Records the last key handled, or clears the cursor (undefined) when a pass reached the end. */
export async function writeHousekeepingCursor(startAfter: string | undefined, at: Date): Promise<void> {
  await guarded('object storage', () =>
    s3().send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: cursorKey,
        ContentType: 'application/json',
        Body: JSON.stringify({ start_after: startAfter ?? null, saved_at: at.toISOString() }),
      }),
    ),
  );
}
