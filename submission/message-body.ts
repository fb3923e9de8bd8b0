import { controlFields, isRemovedHeader } from './control-headers.ts';
import { headerFields, withoutHeaders } from './message-headers.ts';

/**
 * What `POST /message/add-1.0` receives for one SMTP transaction: the raw message unchanged apart
 * from `Bcc` and the `X-Svc-*` headers, as an `eml` message whose recipients are the envelope's
 * (those named in To go to `to`, in Cc to `cc`, every other one to `bcc`, so the message record says
 * who was visible).
 */
export interface Submission {
  /** The request's fields but its content: the message goes in as `eml` (see `requestBodyOf`). */
  body: Record<string, unknown>;
  eml: Buffer;
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
  return {
    eml: withoutHeaders(raw, isRemovedHeader),
    body: {
      message_sender: mailFrom,
      ...(to.length > 0 ? { to } : {}),
      ...(cc.length > 0 ? { cc } : {}),
      ...(bcc.length > 0 ? { bcc } : {}),
      ...(control.tags === undefined ? {} : { tags: control.tags }),
      ...(control.metadata === undefined ? {} : { metadata: control.metadata }),
      ...(control.stream === undefined ? {} : { stream: control.stream }),
      ...(control.tracking === undefined ? {} : { tracking: control.tracking }),
    },
    ...(control.idempotencyKey === undefined ? {} : { idempotencyKey: control.idempotencyKey }),
  };
}

/** Base64 is written in slices of this many bytes (a multiple of 3, so the slices join cleanly). */
const base64Slice = 3 * 16_384;

/**
 * The JSON request of a submission as one buffer, the message's base64 written into it slice by
 * slice: a 4 MB message costs the buffer alone, not also a base64 string and a JSON string of it.
 */
export function requestBodyOf(submission: Submission): Buffer {
  // `content` first, so the first `"eml":""` is ours whatever the metadata holds.
  const json = JSON.stringify({ content: { kind: 'eml', eml: '' }, ...submission.body });
  const at = json.indexOf('"eml":""') + '"eml":"'.length;
  const head = Buffer.from(json.slice(0, at));
  const tail = Buffer.from(json.slice(at));
  const { eml } = submission;
  const encodedLength = 4 * Math.ceil(eml.length / 3);
  const out = Buffer.allocUnsafe(head.length + encodedLength + tail.length);
  let offset = head.copy(out, 0);
  for (let start = 0; start < eml.length; start += base64Slice) {
    offset += out.write(eml.subarray(start, start + base64Slice).toString('base64'), offset, 'latin1');
  }
  tail.copy(out, offset);
  return out;
}
