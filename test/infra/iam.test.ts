import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { functionAccess } from '../../infra/stack/function-access.ts';
import { routes } from '../../shared/routes.ts';
import { type FunctionId, workers } from '../../shared/workers.ts';
import {
  actionsOf,
  allowedActions,
  environmentOf,
  resourcesOfType,
  statementsOf,
  synthService,
} from '../support/infra.ts';

const { template } = synthService();
const functionIds = [
  ...routes.map((route) => route.id),
  ...workers.map((worker) => worker.id),
] as FunctionId[];
const logicalIdOf = (type: string, pattern: RegExp): string => {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => pattern.test(id));
  assert.equal(ids.length, 1, `${type} ${pattern}: ${ids.join(', ')}`);
  return ids[0] as string;
};
const tableId = logicalIdOf('AWS::DynamoDB::Table', /^StorageTable/);
const bucketId = logicalIdOf('AWS::S3::Bucket', /^StorageObjectBucket/);
const keyId = logicalIdOf('AWS::KMS::Key', /^StorageDkimKey/);
const queueId = logicalIdOf('AWS::SQS::Queue', /^StorageSendQueue/);
const eventsDeadLetterQueueId = logicalIdOf('AWS::SQS::Queue', /^StorageEventsDeadLetterQueue/);

/** Functions whose role allows `action` (on any resource, or one mentioning `resourceText`). */
function holders(action: string, resourceText?: string): string[] {
  return functionIds.filter((id) => allowedActions(template, id, resourceText).has(action)).sort();
}

describe('IAM least privilege: named negative checks', () => {
  it('the query function cannot write or delete anything', () => {
    const actions = allowedActions(template, 'message-query');
    for (const forbidden of [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      's3:PutObject',
      's3:DeleteObject',
      'sqs:SendMessage',
    ]) {
      assert.ok(!actions.has(forbidden), `message-query may ${forbidden}`);
    }
    assert.ok(actions.has('dynamodb:Query'));
  });

  it('only the delete functions may delete table items; message-, suppression- and inbound-delete cannot put or update', () => {
    // Template delete removes a template's records; update removes the oldest version at the limit.
    // The stats query deletes settled counter rows, and only those (the next test). Domain delete
    // removes a domain, its keys and claims; domain verify removes a claim and the previous
    // holder's keys when a claim moves the domain. Domain add takes a key out of the DKIM key pool,
    // and only that (below).
    const deleters = [
      'domain-add',
      'domain-delete',
      'domain-verify',
      'inbound-delete',
      'message-delete',
      'stats-query',
      'suppression-delete',
      'template-delete',
      'template-update',
      'webhook-delete',
    ];
    assert.deepEqual(holders('dynamodb:DeleteItem'), deleters);
    assert.deepEqual(holders('dynamodb:DeleteItem', tableId), deleters);
    for (const id of ['message-delete', 'suppression-delete', 'inbound-delete']) {
      const actions = allowedActions(template, id);
      assert.ok(!actions.has('dynamodb:PutItem'), id);
      assert.ok(!actions.has('dynamodb:UpdateItem'), id);
    }
  });

  it('the stats query may update and delete counter rows only, and put nothing', () => {
    const writes = statementsOf(template, 'stats-query').filter((statement) =>
      actionsOf(statement).some(
        (action) => action === 'dynamodb:UpdateItem' || action === 'dynamodb:DeleteItem',
      ),
    );
    assert.equal(writes.length, 1);
    assert.deepEqual(actionsOf(writes[0] ?? {}).sort(), ['dynamodb:DeleteItem', 'dynamodb:UpdateItem']);
    assert.deepEqual(writes[0]?.Condition, {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['STATS#*'] },
    });
    assert.ok(!allowedActions(template, 'stats-query').has('dynamodb:PutItem'));
  });

  it('domain add may delete DKIM key pool items and domain items (undoing a failed add) only', () => {
    const deletes = statementsOf(template, 'domain-add').filter((statement) =>
      actionsOf(statement).includes('dynamodb:DeleteItem'),
    );
    assert.equal(deletes.length, 1);
    assert.deepEqual(actionsOf(deletes[0] ?? {}), ['dynamodb:DeleteItem']);
    assert.deepEqual(deletes[0]?.Condition, {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DKIM_POOL', 'DOMAIN#*'] },
    });
  });

  it('the suppression query function only reads; the add function cannot delete', () => {
    const query = allowedActions(template, 'suppression-query');
    for (const forbidden of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']) {
      assert.ok(!query.has(forbidden), `suppression-query may ${forbidden}`);
    }
    assert.ok(query.has('dynamodb:Query'));
    const add = allowedActions(template, 'suppression-add');
    assert.ok(add.has('dynamodb:PutItem'));
    assert.ok(!add.has('dynamodb:DeleteItem'));
  });

  it('only the batch route may BatchWriteItem (it would bypass the put/delete split); no wildcard action', () => {
    // IAM cannot limit BatchWriteItem to puts: the batch route has it (on the table only, no index)
    // to store 500 new messages in a few requests; its code only puts (docs/security.md).
    assert.deepEqual(holders('dynamodb:BatchWriteItem'), ['message-batch']);
    const [batchWrites] = statementsOf(template, 'message-batch').filter((s) =>
      actionsOf(s).includes('dynamodb:BatchWriteItem'),
    );
    assert.deepEqual(actionsOf(batchWrites ?? {}), ['dynamodb:BatchWriteItem']);
    assert.doesNotMatch(JSON.stringify(batchWrites?.Resource), /index/);
    for (const id of functionIds) {
      for (const statement of statementsOf(template, id)) {
        for (const action of actionsOf(statement)) assert.doesNotMatch(action, /\*/, `${id}: ${action}`);
      }
    }
  });

  it('the batch route may charge the account-wide message budget: UpdateItem on the table itself', () => {
    // One conditional UpdateItem of `RATE#<account>` per batch (shared/platform/rate-limit/message-budget-store.ts).
    const updates = statementsOf(template, 'message-batch').filter((s) =>
      actionsOf(s).includes('dynamodb:UpdateItem'),
    );
    assert.equal(updates.length, 1);
    assert.match(JSON.stringify(updates[0]?.Resource), new RegExp(`"${tableId}","Arn"`));
    assert.doesNotMatch(JSON.stringify(updates[0]?.Resource), /index/);
  });

  it('message objects are deleted only by the delete function; avatar objects only by keepalive-run', () => {
    assert.deepEqual(holders('s3:DeleteObject'), [
      'inbound-delete',
      'keepalive-run',
      'message-delete',
      'template-add',
      'template-delete',
      'template-update',
    ]);
    assert.deepEqual(holders('s3:DeleteObject', '/inbound/*'), ['inbound-delete']);
    assert.deepEqual(holders('s3:DeleteObject', '/messages/*'), ['message-delete']);
    // Template parts: a deleted template's, a removed version's, and those of a write that lost a race.
    assert.deepEqual(holders('s3:DeleteObject', '/templates/*'), [
      'template-add',
      'template-delete',
      'template-update',
    ]);
    assert.deepEqual(holders('s3:DeleteObject', '/avatars/*'), ['keepalive-run']);
    const keepaliveDeletes = statementsOf(template, 'keepalive-run').filter((s) =>
      actionsOf(s).includes('s3:DeleteObject'),
    );
    assert.deepEqual(
      keepaliveDeletes.map((s) => JSON.stringify(s.Resource)),
      [JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/avatars/*']] })],
    );
  });

  it('avatar objects are written only by avatar-get; housekeeping writes only its cursor under housekeeping/', () => {
    assert.deepEqual(holders('s3:PutObject', '/avatars/*'), ['avatar-get']);
    assert.deepEqual(holders('s3:PutObject', '/housekeeping/*'), ['keepalive-run']);
    // message-content stores the signed message and attachments for download (messages/<uuid>/download/).
    assert.deepEqual(holders('s3:PutObject', '/messages/*'), [
      'message-add',
      'message-batch',
      'message-content',
    ]);
    // Received mail: SES writes the raw message (bucket policy); the inbound function what it parsed.
    assert.deepEqual(holders('s3:PutObject', '/inbound/*'), ['inbound']);
  });

  it('template parts are read by the template routes and by the two routes that render a message from them', () => {
    assert.deepEqual(holders('s3:GetObject', '/templates/*'), [
      'message-add',
      'message-batch',
      'template-query',
      'template-render',
      'template-update',
    ]);
  });

  it('object actions stay under their prefixes; only readers may list (for 404 answers)', () => {
    for (const id of functionIds) {
      for (const statement of statementsOf(template, id)) {
        const resource = JSON.stringify(statement.Resource);
        if (!resource.includes(bucketId)) continue;
        if (actionsOf(statement).includes('s3:ListBucket')) {
          assert.deepEqual(actionsOf(statement), ['s3:ListBucket'], `${id} lists with other actions`);
          assert.ok(allowedActions(template, id).has('s3:GetObject'), `${id} lists without reading`);
        } else {
          assert.match(
            resource,
            /\/(messages|avatars|housekeeping|inbound|templates)\/\*"/,
            `${id}: ${resource}`,
          );
        }
      }
    }
    assert.deepEqual(holders('s3:ListBucket'), [
      'avatar-get',
      'inbound',
      'inbound-query',
      'keepalive-run',
      'message-add',
      'message-batch',
      'message-content',
      'sender',
      'template-query',
      'template-render',
      'template-update',
      'track-click',
    ]);
  });

  it('only dkim-set-algorithm, domain-add and the key pool encrypt; only the sender, message-content (which signs a message again), domain-add (a pooled key sealed again for its domain) and the domain checks (a claimant’s key for SES) decrypt DKIM keys (webhook secrets: below)', () => {
    assert.deepEqual(holders('kms:GenerateDataKey', keyId), [
      'dkim-key-pool',
      'dkim-set-algorithm',
      'domain-add',
      'webhook-add',
      'webhook-rotate-secret',
    ]);
    assert.deepEqual(holders('kms:Encrypt'), []);
    assert.deepEqual(holders('kms:Decrypt', keyId), [
      'domain-add',
      'domain-checks',
      'domain-verify',
      'message-content',
      'sender',
      'webhook-delivery',
    ]);
    const withKeyArn = functionIds.filter((id) => 'DKIM_KMS_KEY_ARN' in environmentOf(template, id)).sort();
    assert.deepEqual(withKeyArn, [
      'dkim-key-pool',
      'dkim-set-algorithm',
      'domain-add',
      'domain-checks',
      'domain-verify',
      'message-content',
      'sender',
      'webhook-add',
      'webhook-delivery',
      'webhook-rotate-secret',
    ]);
  });

  it('webhook functions use the wrapping key only for webhook secrets (encryption-context condition)', () => {
    const webhookKeyUsers = ['webhook-add', 'webhook-delivery', 'webhook-rotate-secret'];
    for (const id of webhookKeyUsers) {
      const statements = statementsOf(template, id).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('kms:')),
      );
      assert.equal(statements.length, 1, id);
      assert.deepEqual(
        (statements[0] as { Condition?: unknown }).Condition,
        { StringEquals: { 'kms:EncryptionContext:purpose': 'svc-mail-webhook-secret' } },
        id,
      );
    }
    assert.deepEqual(
      holders('kms:GenerateDataKey', keyId).filter((id) => id.startsWith('webhook-')),
      ['webhook-add', 'webhook-rotate-secret'],
    );
  });

  it('webhook queues: fan-out, replay and test events queue jobs, only the delivery function dead-letters them', () => {
    const webhookQueueId = logicalIdOf('AWS::SQS::Queue', /^StorageWebhookQueue/);
    const webhookDlqId = logicalIdOf('AWS::SQS::Queue', /^StorageWebhookDeadLetterQueue/);
    assert.deepEqual(holders('sqs:SendMessage', webhookQueueId), [
      'webhook-delivery',
      'webhook-fanout',
      'webhook-replay',
      'webhook-test',
    ]);
    assert.deepEqual(holders('sqs:SendMessage', webhookDlqId), ['webhook-delivery']);
    assert.deepEqual(holders('sqs:DeleteMessage', webhookQueueId), ['webhook-delivery']);
    // The table stream's two readers (DynamoDB Streams allows two per shard): webhooks and statistics.
    assert.deepEqual(holders('dynamodb:GetRecords', tableId), ['stats-counter', 'webhook-fanout']);
  });

  it('only the sender sends mail, and only through the configuration set', () => {
    assert.deepEqual(holders('ses:SendRawEmail'), ['sender']);
    const [statement] = statementsOf(template, 'sender').filter((s) =>
      actionsOf(s).includes('ses:SendRawEmail'),
    );
    assert.match(JSON.stringify(statement?.Resource), /configuration-set\/"?,?\{"Ref":"ConfigurationSet/);
    assert.equal(environmentOf(template, 'sender').MAIL_TRANSPORT, 'ses');
    // The envelope sender's subdomain (context mailFromSubdomain), for the per-message bounce address.
    assert.equal(environmentOf(template, 'sender').MAIL_FROM_SUBDOMAIN, 'bounce');
  });

  it('lets SES send as the domains accounts add at run time, only through the configuration set', () => {
    const { template: two } = synthService({ context: { sesIdentity: 'mail.example.com,example.org' } });
    const [statement] = statementsOf(two, 'sender').filter((s) => actionsOf(s).includes('ses:SendRawEmail'));
    const resources = JSON.stringify(statement?.Resource);
    assert.match(resources, /identity\/\*/);
    assert.match(resources, /configuration-set\/"?,?\{"Ref":"ConfigurationSet/);
    assert.deepEqual(
      statementsOf(two, 'message-add').filter((s) => actionsOf(s).includes('ses:SendRawEmail')),
      [],
      'only the sender sends',
    );
    two.resourceCountIs('AWS::SES::EmailIdentity', 2);
    two.hasResourceProperties('AWS::SES::EmailIdentity', {
      EmailIdentity: 'mail.example.com',
      MailFromAttributes: {
        MailFromDomain: 'bounce.mail.example.com',
        BehaviorOnMxFailure: 'REJECT_MESSAGE',
      },
    });
  });

  it('reads SMTP relay credentials from one Secrets Manager secret, never from the environment', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:relay-AbCdEf';
    const { template: smtp } = synthService({
      context: { mailTransport: 'smtp', smtpUrl: 'smtps://relay.example:465', smtpSecretArn: arn },
    });
    assert.equal(environmentOf(smtp, 'sender').SMTP_SECRET_ARN, arn);
    assert.doesNotMatch(String(environmentOf(smtp, 'sender').SMTP_URL), /@/);
    const [statement] = statementsOf(smtp, 'sender').filter((s) =>
      actionsOf(s).includes('secretsmanager:GetSecretValue'),
    );
    assert.equal(statement?.Resource, arn);
  });

  it('only message-add, message-batch and the dispatcher send to the queue; only the workers consume queues', () => {
    assert.deepEqual(holders('sqs:SendMessage', queueId), ['dispatcher', 'message-add', 'message-batch']);
    assert.deepEqual(holders('sqs:DeleteMessage'), ['dead-letter', 'inbound', 'sender', 'webhook-delivery']);
    assert.deepEqual(holders('sqs:DeleteMessage', queueId), ['sender']);
  });

  it('public routes can reach nothing but their own logs (and X-Ray, which has no resources)', () => {
    // The unsubscribe routes open the link's token (the link key); the POST also writes the suppression.
    // The tracking routes record opens and clicks. Both are checked against their declared access
    // with every route (below), not here.
    const tokenRoutes = new Set(['unsubscribe', 'unsubscribe-page', 'track-open', 'track-click']);
    for (const id of routes
      .filter((route) => route.public && !tokenRoutes.has(route.id))
      .map((route) => route.id)) {
      const statements = statementsOf(template, id);
      assert.deepEqual(
        statements.flatMap(actionsOf).sort(),
        ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
        `${id} has more than log access`,
      );
      const env = environmentOf(template, id);
      for (const name of ['TABLE_NAME', 'QUEUE_URL', 'BUCKET_NAME', 'AUTH_JWKS_URL'])
        assert.ok(!(name in env), `${id}: ${name}`);
    }
  });

  it('the unsubscribe routes read the link key and nothing else but, for the POST, the table', () => {
    for (const id of ['unsubscribe', 'unsubscribe-page'] as const) {
      const statements = statementsOf(template, id);
      const keyReads = statements.filter((statement) =>
        actionsOf(statement).includes('secretsmanager:GetSecretValue'),
      );
      assert.equal(keyReads.length, 1, id);
      assert.match(JSON.stringify(keyReads[0]?.Resource), /LinkTokenKey/);
      const env = environmentOf(template, id);
      assert.ok('LINK_TOKEN_SECRET_ARN' in env, id);
      for (const name of ['QUEUE_URL', 'BUCKET_NAME', 'AUTH_JWKS_URL', 'PUBLIC_API_URL'])
        assert.ok(!(name in env), `${id}: ${name}`);
      assert.equal('TABLE_NAME' in env, id === 'unsubscribe', `${id}: TABLE_NAME`);
    }
    assert.ok(
      'PUBLIC_API_URL' in environmentOf(template, 'sender'),
      'the sender knows the base of its links',
    );
  });

  it('every role writes only to its own log group and has no managed policies', () => {
    for (const id of functionIds) {
      const logStatements = statementsOf(template, id).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('logs:')),
      );
      assert.equal(logStatements.length, 1, id);
      assert.match(
        JSON.stringify(logStatements[0]?.Resource),
        /"(Route|Worker)[A-Za-z0-9]+Logs[0-9A-F]{8}","Arn"/,
      );
    }
  });
});

describe('IAM matches the access each route and worker declares (infra/stack/function-access.ts)', () => {
  for (const id of functionIds) {
    const needs = functionAccess[id] as (typeof functionAccess)[FunctionId] & Record<string, unknown>;
    it(`${id}: environment variables come with their permissions`, () => {
      const env = environmentOf(template, id);
      const actions = allowedActions(template, id);
      const table = needs.table as string | undefined;
      assert.equal('TABLE_NAME' in env, table !== undefined);
      assert.equal(actions.has('dynamodb:GetItem'), table !== undefined);
      assert.equal(
        actions.has('dynamodb:PutItem'),
        table === 'write' || table === 'write-delete' || table === 'write-batch',
      );
      assert.equal(actions.has('dynamodb:BatchWriteItem'), table === 'write-batch');
      assert.equal(
        actions.has('dynamodb:DeleteItem'),
        table === 'delete' ||
          table === 'write-delete' ||
          table === 'settle-counters' ||
          needs.dkimKeyPool === 'take',
      );
      assert.equal('BUCKET_NAME' in env, needs.objects !== undefined);
      const sends =
        needs.queue === 'send' || needs.webhookQueue === 'send' || needs.webhookDeadLetterQueue === 'send';
      assert.equal(
        allowedActions(template, id, queueId).has('sqs:SendMessage'),
        needs.queue === 'send',
        `${id} SendMessage to the send queue should be ${needs.queue === 'send'}`,
      );
      // Besides the queues of the access table, on-failure destinations: delivery-events' queue, and
      // the stream failure queue of stats-counter's mapping (webhook-fanout sends to queues anyway).
      assert.equal(
        actions.has('sqs:SendMessage'),
        sends || id === 'delivery-events' || id === 'stats-counter',
        `${id} SendMessage`,
      );
      assert.equal(
        allowedActions(template, id, eventsDeadLetterQueueId).has('sqs:SendMessage'),
        id === 'delivery-events',
      );
      assert.equal('QUEUE_URL' in env, needs.queue === 'send' || id === 'sender');
      assert.equal('WEBHOOK_QUEUE_URL' in env, needs.webhookQueue === 'send' || id === 'webhook-delivery');
      assert.equal('WEBHOOK_DEAD_LETTER_QUEUE_URL' in env, needs.webhookDeadLetterQueue === 'send');
      assert.equal('GRAVATAR_BASE_URL' in env, needs.avatars === true);
      const isProtectedRoute = routes.some((route) => route.id === id && !route.public);
      assert.equal('AUTH_ISSUER' in env, isProtectedRoute);
      assert.equal(env.NODE_OPTIONS, '--enable-source-maps');
    });
  }
});
