import { controlFields, isRemovedHeader } from './control-headers.ts';
import { headerFields, withoutHeaders } from './message-headers.ts';

/**
 * What `POST /message/add-1.0` receives for one SMTP transaction: the raw message unchanged apart
 * from `Bcc` and the `X-Svc-*` headers, as an `eml` message whose recipients are the envelope's
 * (those named in To go to `to`, in Cc to `cc`, every other one to `bcc`, so the message record says
 * who was visible).
 */
export interface Submission {
  body: Record<string, unknown>;
  idempotencyKey?: string;
}

const addressPattern = /[^\s<>,;:"()[\]]+@[^\s<>,;:"()[\]]+/g;

function addressesIn(values: readonly string[]): Set<string> {
  return new Set(
    values.flatMap((value) => (value.match(addressPattern) ?? []).map((found) => found.toLowerCase())),
  );
}

export function submissionOf(raw: Buffer, mailFrom: string, recipients: readonly string[]): Submission {
  const fields = headerFields(raw);
  const control = controlFields(fields);
  const visibleTo = addressesIn(fields.filter((field) => field.name === 'to').map((field) => field.value));
  const visibleCc = addressesIn(fields.filter((field) => field.name === 'cc').map((field) => field.value));
  const to: string[] = [];
  const cc: string[] = [];
  const bcc: string[] = [];
  for (const recipient of recipients) {
    const lower = recipient.toLowerCase();
    if (visibleTo.has(lower)) to.push(recipient);
    else if (visibleCc.has(lower)) cc.push(recipient);
    else bcc.push(recipient);
  }
  const eml = withoutHeaders(raw, isRemovedHeader);
  return {
    body: {
      message_sender: mailFrom,
      ...(to.length > 0 ? { to } : {}),
      ...(cc.length > 0 ? { cc } : {}),
      ...(bcc.length > 0 ? { bcc } : {}),
      content: { kind: 'eml', eml: eml.toString('base64') },
      ...(control.tags === undefined ? {} : { tags: control.tags }),
      ...(control.metadata === undefined ? {} : { metadata: control.metadata }),
      ...(control.stream === undefined ? {} : { stream: control.stream }),
      ...(control.tracking === undefined ? {} : { tracking: control.tracking }),
    },
    ...(control.idempotencyKey === undefined ? {} : { idempotencyKey: control.idempotencyKey }),
  };
}
