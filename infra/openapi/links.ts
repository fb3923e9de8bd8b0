/**
 * OpenAPI `links`: how the answer of an add feeds the operations that read or remove what it made,
 * so a stateful tester (and a reader) can walk each lifecycle: message, template, webhook and
 * suppression. Keyed by route id; each value is the `links` of that route's 200 response.
 */
type Link = { operationId: string; description: string; requestBody: unknown };

const message = '$response.body#/data/message_uuid';
const template = '$response.body#/data/template/alias';
const webhook = '$response.body#/data/webhook/webhook_id';
const firstSuppressed = '$response.body#/data/added/0';

export const operationLinks: Record<string, Record<string, Link>> = {
  'message-add': {
    QueryMessage: {
      operationId: 'messageQuery',
      description: 'The new message in full: senders, recipients and status history',
      requestBody: { message_uuid: `{${message}}` },
    },
    DeleteMessage: {
      operationId: 'messageDelete',
      description: 'Deletes the new message (unless its status protects it)',
      requestBody: { message_uuids: [`{${message}}`] },
    },
  },
  'template-add': {
    QueryTemplate: {
      operationId: 'templateQuery',
      description: 'The new template and its versions',
      requestBody: { alias: `{${template}}` },
    },
    PublishTemplate: {
      operationId: 'templatePublish',
      description: 'Publishes the first version, so messages can use it',
      requestBody: { alias: `{${template}}` },
    },
    DeleteTemplate: {
      operationId: 'templateDelete',
      description: 'Deletes the new template',
      requestBody: { alias: `{${template}}` },
    },
  },
  'webhook-add': {
    QueryWebhook: {
      operationId: 'webhookQuery',
      description: 'The new endpoint and its delivery state',
      requestBody: { webhook_id: `{${webhook}}` },
    },
    DeleteWebhook: {
      operationId: 'webhookDelete',
      description: 'Deletes the new endpoint',
      requestBody: { webhook_id: `{${webhook}}` },
    },
  },
  'suppression-add': {
    QuerySuppression: {
      operationId: 'suppressionQuery',
      description: 'The entry of the first newly suppressed address',
      requestBody: { email: `{${firstSuppressed}}` },
    },
    DeleteSuppression: {
      operationId: 'suppressionDelete',
      description: 'Removes the first newly suppressed address from the list',
      requestBody: { emails: [`{${firstSuppressed}}`] },
    },
  },
};
