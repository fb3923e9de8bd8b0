import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** An item of the table as its stream shows it (the stream carries new and old images). */
export type ItemImage = Record<string, AttributeValue>;

/**
 * One committed change of an item of the table, as its stream reports it: what the stream's
 * consumers take (the handlers in functions/ read it off the Lambda stream records).
 */
export interface TableChange {
  kind?: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** The change's place in its stream shard (the stream always gives one). */
  sequenceNumber?: string;
  /** The item before the change (none for an INSERT). */
  before?: ItemImage;
  /** The item after it (none for a REMOVE). */
  after?: ItemImage;
}
