import { type TrackingSettings, trackedHtml } from '../tracking/index.ts';
import {
  broadcastHeaders,
  emlWithUnsubscribeLink,
  htmlWithUnsubscribeLink,
  textWithUnsubscribeLink,
  withoutListHeaders,
} from './mail/broadcast.ts';
import { composeMime, messageIdFor, mimeBoundaryFor, prepareEml, wireForm } from './mail/compose.ts';
import { type SigningKey, signMessage } from './mail/dkim-signer.ts';
import { feedbackId } from './mail/envelope.ts';
import { rewrittenHeadersOf, type TransportName } from './mail/transport.ts';
import { type DeliveryMessage, type MessageBodies, MissingObjectError } from './store/message-delivery.ts';

/**
 * The signed message, as a pure function of the stored message, its bodies and three facts of the
 * send: the time (the Date header and the DKIM signature's `t=`), the keys that sign and the relay
 * (which header fields the signature leaves out). The MIME boundaries come from the uuid and RSA
 * PKCS#1 v1.5 and Ed25519 signatures are deterministic, so the same facts rebuild the same bytes:
 * the sender composes with them and records them (`DeliveryMessage.composed`), and the content
 * route rebuilds the message exactly as sent from that record (docs/messages.md, "Content").
 */
export interface Composition {
  at: Date;
  keys: readonly SigningKey[];
  transport: TransportName;
  /** The account's opaque Feedback-ID tag (./feedback-id.ts): stable, so not recorded. */
  feedbackTag: string;
  /**
   * A broadcast's one-click unsubscribe URL (docs/streams.md), drawn when it was sent and recorded.
   * Absent for transactional mail, and for a broadcast's preview (composed as accepted, placeholder
   * and all, without the list headers).
   */
  unsubscribeUrl?: string;
  /**
   * Tracking of this copy (docs/tracking.md): the HTML part's links and pixel name this recipient.
   * Tokens are sealed deterministically, so the same facts still rebuild the same bytes.
   */
  tracking?: { settings: TrackingSettings; recipientIndex: number };
}

export type ComposableMessage = Pick<
  DeliveryMessage,
  | 'message_uuid'
  | 'account_id'
  | 'tenant'
  | 'message_sender'
  | 'content_kind'
  | 'from'
  | 'to'
  | 'cc'
  | 'reply_to'
  | 'subject'
  | 'headers'
  | 'attachments'
  | 'stream'
  | 'list_id'
>;

export async function composeSignedMessage(
  message: ComposableMessage,
  bodies: MessageBodies,
  composition: Composition,
): Promise<{ raw: Buffer; signed: boolean }> {
  const messageId = messageIdFor(message.message_uuid, message.tenant);
  const feedback = feedbackId(message.message_uuid, composition.feedbackTag, message.tenant);
  // A broadcast's list headers and visible link come first, then any link rewriting, then signing.
  const url = message.stream === 'broadcast' ? composition.unsubscribeUrl : undefined;
  const listHeaders = url === undefined ? undefined : broadcastHeaders(url, message.list_id);
  let composed: Buffer;
  if (message.content_kind === 'eml') {
    if (bodies.eml === undefined) throw new MissingObjectError(`messages/${message.message_uuid}/content`);
    composed = prepareEml(
      url === undefined ? bodies.eml : emlWithUnsubscribeLink(bodies.eml, url),
      messageId,
      {
        now: composition.at,
        feedbackId: feedback,
        ...(listHeaders === undefined ? {} : { serviceHeaders: listHeaders }),
      },
    );
  } else {
    const text = bodies.text?.toString('utf8');
    const plainHtml = bodies.html?.toString('utf8');
    const html =
      url === undefined || plainHtml === undefined ? plainHtml : htmlWithUnsubscribeLink(plainHtml, url);
    const tracking = composition.tracking;
    composed = await composeMime({
      messageId,
      sender: message.message_sender,
      from: message.from,
      to: message.to,
      cc: message.cc,
      replyTo: message.reply_to,
      subject: message.subject,
      headers:
        listHeaders === undefined
          ? message.headers
          : { ...withoutListHeaders(message.headers ?? {}), ...listHeaders },
      text: url === undefined || text === undefined ? text : textWithUnsubscribeLink(text, url),
      html:
        html === undefined || tracking === undefined
          ? html
          : await trackedHtml(
              html,
              { messageUuid: message.message_uuid, recipientIndex: tracking.recipientIndex },
              tracking.settings,
            ),
      attachments: message.attachments.map((attachment, index) => ({
        filename: attachment.filename,
        contentType: attachment.content_type,
        content: bodies.attachments[index] as Buffer,
      })),
      date: composition.at,
      feedbackId: feedback,
      boundary: mimeBoundaryFor(message.message_uuid),
    });
  }
  const raw = wireForm(composed);
  if (composition.keys.length === 0) return { raw, signed: false };
  return {
    raw: await signMessage(raw, composition.keys, rewrittenHeadersOf[composition.transport], composition.at),
    signed: true,
  };
}
