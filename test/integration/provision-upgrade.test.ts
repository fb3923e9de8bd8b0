import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { describe, it } from 'vitest';
import { provision } from '../../infra/local/provision.ts';
import { tableDefinition } from '../../infra/resources/definitions.ts';
import { hostInfo } from '../support/host.ts';

/**
 * `npm start` keeps its table in DATA_DIR across versions: a table created before an index existed
 * (here: without `suppressions`) gets the missing index when the host provisions it again.
 */
describe('local provisioning of a table from an older version', () => {
  it('adds the indexes the table lacks and keeps the others', async () => {
    const { env } = hostInfo();
    const dynamo = new DynamoDBClient({
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const table = `legacy-${randomUUID().slice(0, 8)}`;
    const old = tableDefinition.indexes.filter((index) => index.name !== 'suppressions');
    const attributes = [
      ...new Set(['pk', 'sk', ...old.flatMap((index) => [index.partitionKey, index.sortKey])]),
    ];
    try {
      await dynamo.send(
        new CreateTableCommand({
          TableName: table,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: attributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: old.map((index) => ({
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' },
              { AttributeName: index.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          })),
        }),
      );
      await provision({
        dynamoEndpoint: env.AWS_ENDPOINT_URL_DYNAMODB as string,
        sqsS3Endpoint: env.AWS_ENDPOINT_URL_SQS as string,
        region: env.AWS_REGION as string,
        names: { table, queue: `${table}-q`, deadLetterQueue: `${table}-dlq`, bucket: table },
      });
      const described = await dynamo.send(new DescribeTableCommand({ TableName: table }));
      assert.deepEqual(
        (described.Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName).sort(),
        tableDefinition.indexes.map((index) => index.name).sort(),
      );
    } finally {
      await dynamo.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
      dynamo.destroy();
    }
  });
});
