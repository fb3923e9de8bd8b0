import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { guarded } from '../../platform/aws/faults.ts';
import { s3 } from '../../platform/aws/s3.ts';
import { bucketName } from '../../platform/config/storage.ts';
import { deleteObjects } from '../../platform/objects/object-store.ts';

/**
 * Received mail in S3 (docs/inbound.md): the raw message SES (or the local inbound mail server)
 * stored under `inbound/raw/`, and what the inbound function parsed from it under
 * `inbound/parsed/<SES message id>/`: `content.json` (text, HTML, headers) and one object per
 * decoded attachment. All of it expires with the bucket's `inbound/` lifecycle rule.
 */
export const inboundObjectKeys = {
  content: (sesMessageId: string) => `inbound/parsed/${sesMessageId}/content.json`,
  attachment: (sesMessageId: string, index: number) => `inbound/parsed/${sesMessageId}/attachments/${index}`,
};

/** How long the URLs of a received message's objects work. */
export const inboundUrlSeconds = 3600;

/** The raw message as a stream (read once, never held whole), and its size. */
export async function openObject(key: string): Promise<{ stream: Readable; size: number }> {
  const result = await guarded('object storage', () =>
    s3().send(new GetObjectCommand({ Bucket: bucketName(), Key: key })),
  );
  return { stream: result.Body as Readable, size: result.ContentLength ?? 0 };
}

export async function getJsonObject<T>(key: string): Promise<T> {
  const result = await guarded('object storage', () =>
    s3().send(new GetObjectCommand({ Bucket: bucketName(), Key: key })),
  );
  return JSON.parse((await result.Body?.transformToString('utf8')) ?? 'null') as T;
}

export async function deleteInboundObjects(objectKeys: readonly string[]): Promise<void> {
  await guarded('object storage', () => deleteObjects(bucketName(), objectKeys));
}

/** A time-limited GET URL; `download` makes the browser save it under that file name. */
export function objectUrl(
  key: string,
  options: { contentType?: string; download?: string } = {},
): Promise<string> {
  const disposition =
    options.download === undefined
      ? undefined
      : `attachment; filename*=UTF-8''${encodeURIComponent(options.download)}`;
  return getSignedUrl(
    s3(),
    new GetObjectCommand({
      Bucket: bucketName(),
      Key: key,
      ...(options.contentType === undefined ? {} : { ResponseContentType: options.contentType }),
      ...(disposition === undefined ? {} : { ResponseContentDisposition: disposition }),
    }),
    { expiresIn: inboundUrlSeconds },
  );
}
