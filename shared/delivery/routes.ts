import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { uuid } from '../platform/schemas/examples.ts';
import { messageContentRequest, messageContentResponse } from './schemas.ts';

export const messageContent = route('message-content', 'POST /message/content-1.0', [
  'messages:read_content',
]);

/** RFC 8058 one-click unsubscribe of a broadcast (docs/streams.md): public, the token is the credential. */
export const unsubscribeOneClick = route('unsubscribe', 'POST /unsubscribe/{token}', [], { public: true });
export const unsubscribePage = route('unsubscribe-page', 'GET /unsubscribe/{token}', [], { public: true });

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const deliveryRoutes = [messageContent, unsubscribeOneClick, unsubscribePage] as const;

const tokenParameter = {
  token: {
    description:
      'The sealed token of the List-Unsubscribe link (opaque; names the account, recipient and message)',
    example: 'AQx3c2Vj…',
  },
};

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const deliveryRouteDetails = {
  'message-content': {
    summary: 'The content of one message: subject, bodies, headers, attachments and the signed message',
    tag: 'messages',
    // Rebuilds a message as sent (its bodies, the DKIM keys that signed it), stores the signed message
    // and its attachments under messages/<uuid>/download/ and presigns them; records their number on
    // the item, so that deleting the message removes them.
    access: {
      table: 'write',
      objects: { 'messages/': ['read', 'write'] },
      dkimKey: 'decrypt',
      composes: true,
    },
    request: messageContentRequest,
    requestIn: 'body',
    response: messageContentResponse,
    // 112: unknown message_uuid (or another account's); 111: its stored content is missing;
    // 107: `recipient` is not one of the message's recipients.
    errors: [Code.NotFound, Code.MethodValidation, Code.InvalidInput],
    examples: {
      request: {
        one: { summary: 'One message', value: { message_uuid: uuid } },
        copy: {
          summary: "One recipient's copy of a tracked message",
          value: { message_uuid: uuid, recipient: 'ada@example.org' },
        },
      },
      response: {
        sent: {
          summary: 'A sent message with one attachment',
          value: {
            subject: 'Invoice 2026-117',
            text: 'Your invoice is attached.\r\n',
            html: null,
            headers: [
              { name: 'DKIM-Signature', value: 'v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; …' },
              { name: 'From', value: 'billing@example.test' },
              { name: 'To', value: 'ada@example.org' },
              { name: 'Subject', value: 'Invoice 2026-117' },
              { name: 'Message-ID', value: `<${uuid}@example.test>` },
              { name: 'Date', value: 'Sun, 22 Nov 2026 08:15:00 +0000' },
              { name: 'MIME-Version', value: '1.0' },
            ],
            attachments: [
              {
                filename: 'invoice.pdf',
                content_type: 'application/pdf',
                size: 48213,
                url: `https://bucket.s3.amazonaws.com/messages/${uuid}/download/attachment-1?X-Amz-Signature=…`,
              },
            ],
            raw_url: `https://bucket.s3.amazonaws.com/messages/${uuid}/download/message.eml?X-Amz-Signature=…`,
            expires_at: '2026-11-22T09:30:00.000+01:00',
            preview: false,
          },
        },
      },
    },
  },
  unsubscribe: {
    summary: "One-click unsubscribe (RFC 8058): the recipient leaves the account's broadcast stream",
    tag: 'streams',
    // Opens the token (the link key), writes the broadcast suppression and the message's note.
    access: { table: 'write', linkTokens: 'open' },
    pathParameters: tokenParameter,
    form: {
      'List-Unsubscribe': { description: 'Always `One-Click` (RFC 8058 section 3.1)', example: 'One-Click' },
    },
    page: { description: 'Unsubscribed (or already): an empty body, no redirect, no cookie' },
    // 112: an unknown, altered or foreign token (nothing changes); 107: a body that is not the one-click request.
    errors: [Code.NotFound, Code.InvalidInput],
  },
  'unsubscribe-page': {
    summary:
      'The page of an unsubscribe link: a button that makes the one-click POST (a GET alone changes nothing)',
    tag: 'streams',
    access: { linkTokens: 'open' },
    pathParameters: tokenParameter,
    page: {
      description: 'A small page (strict CSP, no third-party origin) with the unsubscribe button',
      contentType: 'text/html',
    },
    errors: [Code.NotFound],
  },
} as const satisfies RouteDetailsOf<(typeof deliveryRoutes)[number]>;
