import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { guarded } from '../aws/faults.ts';
import { s3 } from '../aws/s3.ts';
import { bucketName } from '../config/storage.ts';
import type { StoredObject } from './messages.ts';

/**
 * A message's stored objects in S3: the S3 half of ./message-objects.ts, which loads this module
 * (and with it the S3 client) on the first call that needs it.
 */
export async function putObjects(objects: readonly StoredObject[]): Promise<void> {
  await guarded('object storage', () =>
    Promise.all(
      objects.map((object) =>
        s3().send(
          new PutObjectCommand({
            Bucket: bucketName(),
            Key: object.key,
            Body: object.body,
            ContentType: object.contentType,
          }),
        ),
      ),
    ),
  );
}

export async function deleteObjects(objectKeys: readonly string[]): Promise<void> {
  for (let start = 0; start < objectKeys.length; start += 1000) {
    const batch = objectKeys.slice(start, start + 1000);
    await guarded('object storage', () =>
      s3().send(
        new DeleteObjectsCommand({
          Bucket: bucketName(),
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      ),
    );
  }
}

export async function getObjectBytes(key: string): Promise<Buffer> {
  const result = await guarded('object storage', () =>
    s3().send(new GetObjectCommand({ Bucket: bucketName(), Key: key })),
  );
  const bytes = await result.Body?.transformToByteArray();
  return Buffer.from(bytes ?? []);
}
