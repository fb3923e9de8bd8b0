import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3 } from '../aws/s3.ts';
import type { StoredObject } from './objects.ts';

/**
 * A message's stored objects in S3: the S3 half of ./message-objects.ts, which loads this module
 * (and with it the S3 client) on the first call that needs it, and gives it the bucket and maps
 * its failures. Leaving the configuration and the fault mapping to the caller keeps them, and the
 * error catalogue they import, in the function's main file: code a lazy chunk shares with the start
 * becomes a chunk of its own, one more file at every cold start.
 */
export async function putObjects(bucket: string, objects: readonly StoredObject[]): Promise<void> {
  await Promise.all(
    objects.map((object) =>
      s3().send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: object.key,
          Body: object.body,
          ContentType: object.contentType,
          ...(object.downloadAs === undefined
            ? {}
            : { ContentDisposition: contentDisposition(object.downloadAs) }),
        }),
      ),
    ),
  );
}

/** DeleteObjects takes at most 1,000 keys a request. */
export async function deleteObjects(bucket: string, objectKeys: readonly string[]): Promise<void> {
  for (let start = 0; start < objectKeys.length; start += 1000) {
    const batch = objectKeys.slice(start, start + 1000);
    await s3().send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
}

export async function getObjectBytes(bucket: string, key: string): Promise<Buffer> {
  const result = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const bytes = await result.Body?.transformToByteArray();
  return Buffer.from(bytes ?? []);
}

/** A GET URL of the object that any HTTP client can fetch until it expires. */
export async function presignGet(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
  return getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket, Key: key }), {
    expiresIn: expiresInSeconds,
  });
}

/** `attachment` with the file name as RFC 6266 wants it: an ASCII fallback and the UTF-8 name. */
function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  // RFC 5987 attr-chars: encodeURIComponent leaves ' ( ) * as they are, which the grammar excludes.
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
