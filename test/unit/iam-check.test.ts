import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { iamRequestsOf } from '../../infra/local/aws-call-recorder.ts';
import { allows, type FunctionPolicy } from '../support/iam-check.ts';

const table = 'arn:aws:dynamodb:us-east-1:000000000000:table/mail';
const policy: FunctionPolicy = {
  functionId: 'stats-query',
  statements: [
    { effect: 'Allow', actions: ['dynamodb:Query'], resources: [table, `${table}/index/gsi1`] },
    {
      effect: 'Allow',
      actions: ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [table],
      condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['STATS#*'] } },
    },
    { effect: 'Allow', actions: ['s3:GetObject'], resources: ['arn:aws:s3:::bucket/messages/*'] },
  ],
};
const request = (clientName: string, command: string, input: Record<string, unknown>) =>
  iamRequestsOf(clientName, command, input).map((entry) => ({ function: 'stats-query', ...entry }));

describe('the IAM check: recorded SDK calls against a policy', () => {
  it('matches actions, resources with indexes and key prefixes, and refuses the rest', () => {
    const [query] = request('DynamoDBClient', 'QueryCommand', { TableName: 'mail', IndexName: 'gsi1' });
    assert.equal(query?.resource, `${table}/index/gsi1`);
    assert.ok(allows(policy, query as never));
    const [other] = request('DynamoDBClient', 'QueryCommand', { TableName: 'mail', IndexName: 'gsi2' });
    assert.ok(!allows(policy, other as never));
    const [read] = request('S3Client', 'HeadObjectCommand', { Bucket: 'bucket', Key: 'messages/a' });
    assert.equal(read?.action, 's3:GetObject');
    assert.ok(allows(policy, read as never));
    const [elsewhere] = request('S3Client', 'GetObjectCommand', { Bucket: 'bucket', Key: 'templates/a' });
    assert.ok(!allows(policy, elsewhere as never));
  });

  it('applies dynamodb:LeadingKeys to every item of a transaction', () => {
    const settle = request('DynamoDBClient', 'TransactWriteItemsCommand', {
      TransactItems: [
        { Update: { TableName: 'mail', Key: { pk: { S: 'STATS#acct' }, sk: { S: 'x' } } } },
        { Delete: { TableName: 'mail', Key: { pk: { S: 'STATS#acct' }, sk: { S: 'y' } } } },
      ],
    });
    assert.deepEqual(
      settle.map((entry) => entry.action),
      ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    );
    assert.ok(settle.every((entry) => allows(policy, entry)));
    const [message] = request('DynamoDBClient', 'DeleteItemCommand', {
      TableName: 'mail',
      Key: { pk: { S: 'MESSAGE#1' }, sk: { S: 'x' } },
    });
    assert.ok(!allows(policy, message as never));
  });
});
