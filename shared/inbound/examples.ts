import { at, inboundExampleId, uuid } from '../platform/schemas/examples.ts';

/** A received message's summary, as the inbound routes and the `inbound.received` event show it. */
export const inboundExampleSummary = {
  inbound_uuid: inboundExampleId,
  received_at: at,
  recipient: 'support+ticket-42@example.test',
  from: { email: 'ada@example.org', name: 'Ada Lovelace' },
  to: [{ email: 'support+ticket-42@example.test', name: null }],
  cc: [],
  subject: 'Re: Your order 42',
  message_id: '<CAF8s=abc@mail.example.org>',
  in_reply_to: `<${uuid}@example.test>`,
  reply_to_message_uuid: uuid,
  mailbox_hash: 'ticket-42',
  auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: { verdict: 'pass' },
  size: 48213,
  parse_error: null,
};
