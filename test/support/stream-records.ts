import type { DynamoDBRecord } from 'aws-lambda';

/**
 * A table stream record of a message item whose state cannot be decoded (not brotli), as a corrupt
 * or foreign write would leave it: what the stream consumers must log and leave out rather than
 * retry for ever.
 */
export function undecodableMessageRecord(
  account: string,
  uuid: string,
  eventName: 'INSERT' | 'MODIFY',
  sequenceNumber: string,
): DynamoDBRecord {
  return {
    eventName,
    dynamodb: {
      SequenceNumber: sequenceNumber,
      NewImage: {
        pk: { S: `MESSAGE#${uuid}` },
        sk: { S: 'MESSAGE' },
        message_uuid: { S: uuid },
        account_id: { S: account },
        st: { B: Buffer.from('not brotli').toString('base64') },
      },
    },
  } as DynamoDBRecord;
}
