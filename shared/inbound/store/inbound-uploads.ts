import { Readable, Transform } from 'node:stream';
import { Upload } from '@aws-sdk/lib-storage';
import { guarded } from '../../platform/aws/faults.ts';
import { s3 } from '../../platform/aws/s3.ts';
import { bucketName } from '../../platform/config/storage.ts';

/**
 * Writing received mail's parts to S3 (the inbound function only: the query and delete functions
 * never bundle the multipart uploader).
 */
/** Parts of a streamed upload, and how many are in flight: about 10 MB of memory at most. */
const uploadPart = { bytes: 5 * 1024 * 1024, inFlight: 2 } as const;

/**
 * Stores a stream of unknown length without holding it whole: one PUT when it is small, else a
 * multipart upload of 5 MB parts (S3's minimum), two at a time. Resolves with the bytes stored.
 */
export async function uploadStream(key: string, body: Readable, contentType: string): Promise<number> {
  let bytes = 0;
  const counted = body.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  body.once('error', (error) => counted.destroy(error));
  await guarded('object storage', () =>
    new Upload({
      client: s3(),
      params: { Bucket: bucketName(), Key: key, Body: counted, ContentType: contentType },
      partSize: uploadPart.bytes,
      queueSize: uploadPart.inFlight,
      leavePartsOnError: false,
    }).done(),
  );
  return bytes;
}

/** Stores a whole body (one PUT, or parts when it is large). */
export async function putObject(key: string, body: string, contentType: string): Promise<void> {
  await uploadStream(key, Readable.from([Buffer.from(body)]), contentType);
}
