import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at, eventExampleId, webhookExampleId } from '../platform/schemas/examples.ts';
import {
  webhookAddRequest,
  webhookAddResponse,
  webhookDeleteResponse,
  webhookIdRequest,
  webhookQueryRequest,
  webhookQueryResponse,
  webhookReplayRequest,
  webhookReplayResponse,
  webhookRotateSecretResponse,
  webhookTestRequest,
  webhookTestResponse,
  webhookUpdateRequest,
  webhookUpdateResponse,
} from './schemas.ts';

export const webhookAdd = route('webhook-add', 'POST /webhook/add-1.0', ['webhooks:write']);
export const webhookQuery = route('webhook-query', 'POST /webhook/query-1.0', ['webhooks:read']);
export const webhookDelete = route('webhook-delete', 'POST /webhook/delete-1.0', ['webhooks:write']);
export const webhookRotateSecret = route('webhook-rotate-secret', 'POST /webhook/rotate-secret-1.0', [
  'webhooks:write',
]);
export const webhookReplay = route('webhook-replay', 'POST /webhook/replay-1.0', ['webhooks:write']);
export const webhookUpdate = route('webhook-update', 'POST /webhook/update-1.0', ['webhooks:write']);
export const webhookTest = route('webhook-test', 'POST /webhook/test-1.0', ['webhooks:write']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const webhooksRoutes = [
  webhookAdd,
  webhookQuery,
  webhookDelete,
  webhookRotateSecret,
  webhookReplay,
  webhookUpdate,
  webhookTest,
] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
/** The endpoint as the add and rotate-secret answers show it: the only answers that carry the secret. */
function exampleWebhookWithSecret(secret: string) {
  return {
    webhook_id: webhookExampleId,
    url: 'https://hooks.example.com/svc-mail',
    events: ['message.delivered', 'message.bounced'],
    description: null,
    enabled: true,
    created_at: at,
    health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
    note: null,
    secret,
  };
}

export const webhooksRouteDetails = {
  'webhook-add': {
    summary: 'Add a webhook endpoint; the answer carries its signing secret',
    tag: 'webhooks',
    // Webhooks (docs/webhooks.md): endpoints with their secret encrypted under the wrapping key.
    access: { table: 'write', webhookSecrets: 'encrypt' },
    request: webhookAddRequest,
    requestIn: 'body',
    response: webhookAddResponse,
    // 111: the account already has 10 endpoints; 107 also for a URL the target rule refuses.
    errors: [Code.MethodValidation],
    examples: {
      request: {
        all: { summary: 'Every event type', value: { url: 'https://hooks.example.com/svc-mail' } },
        some: {
          summary: 'Bounces and complaints only',
          value: {
            url: 'https://hooks.example.com/svc-mail/bounces',
            events: ['message.bounced', 'message.complained'],
            description: 'Suppression sync',
          },
        },
      },
      response: {
        added: {
          summary: 'Added (the secret is shown only now)',
          value: {
            webhook: exampleWebhookWithSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwQ0Cu6nD1vGs='),
          },
        },
      },
    },
  },
  'webhook-query': {
    summary: 'Your webhook endpoints, or one with its latest delivery attempts',
    tag: 'webhooks',
    access: { table: 'read' },
    request: webhookQueryRequest,
    requestIn: 'body',
    response: webhookQueryResponse,
    // 112: unknown or another account's webhook_id.
    errors: [Code.NotFound],
    examples: {
      request: {
        all: { summary: 'Every endpoint', value: {} },
        one: { summary: 'One endpoint with its delivery attempts', value: { webhook_id: webhookExampleId } },
      },
      response: {
        one: {
          summary: 'One endpoint with its delivery attempts',
          value: {
            webhook: {
              webhook_id: webhookExampleId,
              url: 'https://hooks.example.com/svc-mail',
              events: ['message.delivered'],
              description: null,
              enabled: true,
              created_at: at,
              // The latest attempt succeeded: the failure before it is forgotten.
              health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
              note: null,
              deliveries: [
                {
                  event_id: eventExampleId,
                  type: 'message.delivered',
                  attempt: 2,
                  status_code: 200,
                  error: null,
                  at,
                  next_attempt_at: null,
                },
                {
                  event_id: eventExampleId,
                  type: 'message.delivered',
                  attempt: 1,
                  status_code: 500,
                  error: 'Receiver answered 500',
                  at,
                  next_attempt_at: at,
                },
              ],
            },
          },
        },
      },
    },
  },
  'webhook-delete': {
    summary: 'Delete a webhook endpoint',
    tag: 'webhooks',
    // Deletes the endpoint and decrements the account's counter in one transaction.
    access: { table: 'write-delete' },
    request: webhookIdRequest,
    requestIn: 'body',
    response: webhookDeleteResponse,
    errors: [Code.NotFound],
    examples: {
      request: { one: { summary: 'Delete an endpoint', value: { webhook_id: webhookExampleId } } },
      response: { deleted: { summary: 'Deleted', value: { webhook_id: webhookExampleId, deleted: true } } },
    },
  },
  'webhook-rotate-secret': {
    summary: 'Rotate the signing secret of a webhook endpoint',
    tag: 'webhooks',
    access: { table: 'write', webhookSecrets: 'encrypt' },
    request: webhookIdRequest,
    requestIn: 'body',
    response: webhookRotateSecretResponse,
    // 112: unknown webhook; 5: rotated concurrently.
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: { one: { summary: 'Rotate the secret', value: { webhook_id: webhookExampleId } } },
      response: {
        rotated: {
          summary: 'The new secret (the previous one also signs for 24 h)',
          value: {
            webhook: exampleWebhookWithSecret('whsec_3q2+7w8bY1bQ0dVHc5N6x9o4mR7sT2uV8wXyZaBcDeE='),
          },
        },
      },
    },
  },
  'webhook-replay': {
    summary: 'Deliver a past event to a webhook endpoint again',
    tag: 'webhooks',
    access: { table: 'read', webhookQueue: 'send' },
    request: webhookReplayRequest,
    requestIn: 'body',
    response: webhookReplayResponse,
    // 112: unknown webhook or event (events are kept 7 days); 111: the endpoint is disabled.
    errors: [Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        one: {
          summary: 'Deliver an event again',
          value: { webhook_id: webhookExampleId, event_id: eventExampleId },
        },
      },
      response: {
        queued: {
          summary: 'Queued',
          value: { webhook_id: webhookExampleId, event_id: eventExampleId, queued: true },
        },
      },
    },
  },
  'webhook-update': {
    summary: 'Change the URL or the events of a webhook endpoint; its secret stays',
    tag: 'webhooks',
    access: { table: 'write' },
    request: webhookUpdateRequest,
    requestIn: 'body',
    response: webhookUpdateResponse,
    // 112: unknown webhook; 107 also for a URL the target rule refuses, or neither url nor events.
    errors: [Code.NotFound],
    examples: {
      request: {
        url: {
          summary: 'Move the endpoint',
          value: { webhook_id: webhookExampleId, url: 'https://hooks.example.com/svc-mail/v2' },
        },
        events: {
          summary: 'Receive bounces only',
          value: { webhook_id: webhookExampleId, events: ['message.bounced'] },
        },
      },
      response: {
        updated: {
          summary: 'Updated (the secret is not shown: it did not change)',
          value: {
            webhook: {
              webhook_id: webhookExampleId,
              url: 'https://hooks.example.com/svc-mail/v2',
              events: ['message.delivered', 'message.bounced'],
              description: null,
              enabled: true,
              created_at: at,
              health: { state: 'healthy', consecutive_failures: 0, failing_since: null, paused_until: null },
              note: null,
            },
          },
        },
      },
    },
  },
  'webhook-test': {
    summary: 'Send a signed sample event to a webhook endpoint',
    tag: 'webhooks',
    // The sample is stored like a real event, then queued to this endpoint alone.
    access: { table: 'write', webhookQueue: 'send' },
    request: webhookTestRequest,
    requestIn: 'body',
    response: webhookTestResponse,
    // 112: unknown webhook; 111: the endpoint is disabled.
    errors: [Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        delivered: {
          summary: 'A sample message.delivered',
          value: { webhook_id: webhookExampleId, type: 'message.delivered' },
        },
      },
      response: {
        queued: {
          summary: "Queued: the attempt shows in the endpoint's deliveries",
          value: {
            webhook_id: webhookExampleId,
            event_id: eventExampleId,
            type: 'message.delivered',
            queued: true,
          },
        },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof webhooksRoutes)[number]>;
