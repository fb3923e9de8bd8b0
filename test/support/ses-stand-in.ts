import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import nodemailer from 'nodemailer';

/**
 * A minimal local stand-in for Amazon SES v2 `SendEmail` with raw content (there is no SES
 * emulator), so the service's real SES transport and the real AWS SDK run end to end: point a host
 * at it with `MAIL_TRANSPORT=ses` and `AWS_ENDPOINT_URL_SESV2=<url>`. Like SES, it gives each
 * message an id of SES's shape, **replaces the Message-ID** with `<id@email.amazonses.com>`
 * (us-east-1; `<id@<region>.amazonses.com>` elsewhere), answers `{"MessageId"}` and relays the
 * message over SMTP (to a host's recipient sink). Only what the service sends is implemented:
 * `POST /v2/email/outbound-emails` with `Content.Raw`; no signature check, no quotas, no events.
 */
export interface SesSentMessage {
  sesMessageId: string;
  /** The `message_uuid` message tag the service sends with each message. */
  messageUuid: string | undefined;
  /** The request's `EmailTags`, as sent (an empty list when it had none). */
  emailTags: Array<{ Name: string; Value: string }>;
  /** The Message-ID the recipients see. */
  messageIdHeader: string;
  from: string;
  to: string[];
  /** The message as relayed (Message-ID replaced). */
  raw: Buffer;
}

/** A domain identity as the stand-in keeps it (the identity routes of SES v2). */
export interface SesIdentity {
  selector: string | undefined;
  privateKey: string | undefined;
  mailFrom: string | undefined;
  dkimStatus: string;
  mailFromStatus: string;
}

export interface SesStandIn {
  url: string;
  sent: SesSentMessage[];
  /**
   * Domain identities: CreateEmailIdentity (BYODKIM), PutEmailIdentityMailFromAttributes,
   * PutEmailIdentityDkimSigningAttributes (EXTERNAL), GetEmailIdentity, DeleteEmailIdentity. A test sets their statuses as SES would after its own
   * DNS checks.
   */
  identities: Map<string, SesIdentity>;
  /** Domains whose PutEmailIdentityMailFromAttributes fails (BadRequestException). */
  failMailFrom: Set<string>;
  /** Domains whose PutEmailIdentityDkimSigningAttributes fails (BadRequestException). */
  failDkimSigning: Set<string>;
  /** Where accepted messages are relayed (`smtp://host:port`), e.g. a host's SMTP sink. */
  relayTo(smtpUrl: string): void;
  close(): Promise<void>;
}

interface SendEmailRequest {
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[] };
  Content?: { Raw?: { Data?: string } };
  EmailTags?: Array<{ Name: string; Value: string }>;
}

/** The domain SES gives Message-IDs in a region. */
export const sesMessageIdDomain = (region: string): string =>
  region === 'us-east-1' ? 'email.amazonses.com' : `${region}.amazonses.com`;

/** An id of the shape SES returns: 16 hex digits, a UUID, `-000000`. */
const newSesMessageId = (): string => `0100${randomBytes(6).toString('hex')}-${randomUUID()}-000000`;

/** The message with its Message-ID header (folded lines included) replaced by `messageId`. */
export function replaceMessageId(raw: Buffer, messageId: string): Buffer {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = end === -1 ? text : text.slice(0, end);
  const body = end === -1 ? '' : text.slice(end);
  const kept = head.replace(/^message-id:[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*\r?\n?/gim, '');
  const newline = head.includes('\r\n') ? '\r\n' : '\n';
  return Buffer.from(`Message-ID: ${messageId}${newline}${kept.replace(/\r?\n$/, '')}${body}`, 'latin1');
}

export async function startSesStandIn(options: { region?: string } = {}): Promise<SesStandIn> {
  const domain = sesMessageIdDomain(options.region ?? 'us-east-1');
  const sent: SesSentMessage[] = [];
  let relay: string | undefined;

  const answer = (response: ServerResponse, status: number, body: unknown, errorType?: string) => {
    response.writeHead(status, {
      'content-type': 'application/json',
      ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }),
    });
    response.end(JSON.stringify(body));
  };

  const identities = new Map<string, SesIdentity>();
  const failMailFrom = new Set<string>();
  const failDkimSigning = new Set<string>();

  /** The identity routes; false when the request is not one of them. */
  const identityRoute = (request: IncomingMessage, response: ServerResponse, body: string): boolean => {
    const path = request.url?.split('?')[0] ?? '';
    const match = /^\/v2\/email\/identities(?:\/([^/]+))?(\/mail-from|\/dkim\/signing)?$/.exec(path);
    if (match === null) return false;
    const name = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
    const input = body === '' ? {} : (JSON.parse(body) as Record<string, any>);
    const notFound = () => answer(response, 404, { message: 'Identity not found' }, 'NotFoundException');
    if (request.method === 'POST' && name === undefined) {
      const identity = String(input.EmailIdentity);
      if (identities.has(identity)) {
        answer(response, 400, { message: 'Identity exists' }, 'AlreadyExistsException');
        return true;
      }
      identities.set(identity, {
        selector: input.DkimSigningAttributes?.DomainSigningSelector,
        privateKey: input.DkimSigningAttributes?.DomainSigningPrivateKey,
        mailFrom: undefined,
        dkimStatus: 'PENDING',
        mailFromStatus: 'PENDING',
      });
      answer(response, 200, {
        IdentityType: 'DOMAIN',
        VerifiedForSendingStatus: false,
        DkimAttributes: { SigningEnabled: true, Status: 'PENDING', SigningAttributesOrigin: 'EXTERNAL' },
      });
      return true;
    }
    const identity = name === undefined ? undefined : identities.get(name);
    if (name === undefined || identity === undefined) {
      notFound();
      return true;
    }
    if (request.method === 'PUT' && match[2] === '/dkim/signing') {
      if (failDkimSigning.has(name) || input.SigningAttributesOrigin !== 'EXTERNAL') {
        answer(response, 400, { message: 'DKIM signing attributes refused' }, 'BadRequestException');
        return true;
      }
      // A new key: SES checks its record again.
      identity.selector = input.SigningAttributes?.DomainSigningSelector;
      identity.privateKey = input.SigningAttributes?.DomainSigningPrivateKey;
      identity.dkimStatus = 'PENDING';
      answer(response, 200, { DkimStatus: 'PENDING', DkimTokens: [identity.selector] });
    } else if (request.method === 'PUT' && match[2] !== undefined) {
      if (failMailFrom.has(name)) {
        answer(response, 400, { message: 'MAIL FROM refused' }, 'BadRequestException');
        return true;
      }
      identity.mailFrom = input.MailFromDomain;
      answer(response, 200, {});
    } else if (request.method === 'GET') {
      answer(response, 200, {
        IdentityType: 'DOMAIN',
        VerifiedForSendingStatus: identity.dkimStatus === 'SUCCESS',
        DkimAttributes: {
          SigningEnabled: true,
          Status: identity.dkimStatus,
          SigningAttributesOrigin: 'EXTERNAL',
        },
        MailFromAttributes: {
          MailFromDomain: identity.mailFrom,
          MailFromDomainStatus: identity.mailFromStatus,
          BehaviorOnMxFailure: 'REJECT_MESSAGE',
        },
      });
    } else if (request.method === 'DELETE') {
      identities.delete(name);
      answer(response, 200, {});
    } else notFound();
    return true;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (identityRoute(request, response, Buffer.concat(chunks).toString('utf8'))) return;
    if (request.method !== 'POST' || request.url?.split('?')[0] !== '/v2/email/outbound-emails') {
      return answer(
        response,
        404,
        { message: `not implemented: ${request.method} ${request.url}` },
        'NotFoundException',
      );
    }
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SendEmailRequest;
    const data = input.Content?.Raw?.Data;
    const to = input.Destination?.ToAddresses ?? [];
    if (data === undefined || input.FromEmailAddress === undefined || to.length === 0) {
      return answer(
        response,
        400,
        { message: 'Raw content, FromEmailAddress and ToAddresses are required' },
        'BadRequestException',
      );
    }
    if (relay === undefined)
      return answer(response, 500, { message: 'no relay configured' }, 'InternalFailure');
    const sesMessageId = newSesMessageId();
    const messageIdHeader = `<${sesMessageId}@${domain}>`;
    const raw = replaceMessageId(Buffer.from(data, 'base64'), messageIdHeader);
    const transport = nodemailer.createTransport(relay);
    try {
      // SES's own envelope sender (the bounce address at amazonses.com), as it uses without a custom MAIL FROM.
      await transport.sendMail({ envelope: { from: `${sesMessageId}@amazonses.com`, to }, raw });
    } finally {
      transport.close();
    }
    sent.push({
      sesMessageId,
      messageUuid: input.EmailTags?.find((tag) => tag.Name === 'message_uuid')?.Value,
      emailTags: input.EmailTags ?? [],
      messageIdHeader,
      from: input.FromEmailAddress,
      to,
      raw,
    });
    return answer(response, 200, { MessageId: sesMessageId });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) =>
      answer(response, 500, { message: String((error as Error).message ?? error) }, 'InternalFailure'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    identities,
    failMailFrom,
    failDkimSigning,
    relayTo: (smtpUrl) => {
      relay = smtpUrl;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
