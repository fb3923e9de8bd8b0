import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Upload } from '@aws-sdk/lib-storage';
import { authenticate } from 'mailauth';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AuthVerdict } from '../../shared/inbound/model/receipt.ts';
import { sesStatusOf } from '../../shared/inbound/model/receipt.ts';
import { envList, envNumber } from '../../shared/platform/config/env.ts';
import { bucketDefinition } from '../resources/definitions.ts';
import { deliverFeedback, returnPathMessage } from './feedback-endpoint.ts';
import type { LocalWorker } from './workers.ts';

/**
 * The local host's stand-in for Amazon SES receiving (docs/inbound.md, "Local host"): an SMTP
 * server on `INBOUND_SMTP_PORT` that does what SES's MX and the stack's receipt rule do:
 * - RCPT TO for a domain that is not registered or does not receive (the admin command) is refused
 *   with 550, as the receipt rule's recipient list refuses it on AWS; at most 50 recipients;
 * - RCPT TO a message's return path (`<uuid>@<a domain's MAIL FROM domain>`, from the table) is
 *   feedback: a bounce that came later is recorded as SES's feedback endpoint records it
 *   (feedback-endpoint.ts), and nothing is stored;
 * - a message over 40 MB (SES's limit) is refused with 552, at MAIL FROM when the client announces
 *   its SIZE, else at the end of DATA;
 * - SPF, DKIM and DMARC are checked with mailauth against the DNS servers of `DNS_SERVERS` (SES
 *   checks them on AWS); no spam or virus scanner runs here, so the receipt carries no such verdict;
 * - the message is stored in the bucket under `inbound/raw/<id>` with the trace headers prepended
 *   (Return-Path, Received, Received-SPF, Authentication-Results), as SES's S3 action stores it;
 * - SES's receipt notification (the JSON the S3 action publishes to SNS) goes to the inbound queue,
 *   whose event source feeds the same inbound function as on AWS;
 * - only then is the message accepted (250), so nothing acknowledged can be lost: a store or queue
 *   failure answers 451 and the client tries again.
 */
export const inboundLimits = { maxBytes: 40 * 1024 * 1024, maxRecipients: 50 } as const;

export interface InboundMailServer {
  port: number;
  close(): Promise<void>;
}

/** SES-like message ids: 40 lower-case letters and digits. */
function sesMessageId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(40)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

/** A resolver for mailauth (the shape of `dns.promises.resolve`), through DNS_SERVERS. */
function dnsResolver(): (name: string, type: string) => Promise<unknown> {
  const servers = envList('DNS_SERVERS');
  const timeout = envNumber('DNS_TIMEOUT_MS', 1_500, { min: 50 });
  const resolver = new Resolver({ timeout, tries: 1 });
  if (servers.length > 0) resolver.setServers(servers);
  return (name, type) => resolver.resolve(name, type);
}

const verdictOf = (result: string | undefined): AuthVerdict => {
  switch (result) {
    case 'pass':
      return 'pass';
    case 'fail':
    case 'softfail':
    case 'policy':
      return 'fail';
    case 'temperror':
    case 'permerror':
      return 'error';
    default:
      return 'none';
  }
};

/** mailauth's checks, as SES's verdicts (a message passes DKIM when one of its signatures does). */
async function checkAuthentication(
  raw: Buffer,
  session: SMTPServerSession,
  resolve: (name: string, type: string) => Promise<unknown>,
): Promise<{ spf: AuthVerdict; dkim: AuthVerdict; dmarc: AuthVerdict; headers: string }> {
  const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const result = await authenticate(raw, {
    ip: session.remoteAddress.replace(/^::ffff:/, ''),
    helo: session.hostNameAppearsAs,
    sender: mailFrom,
    mta: 'inbound-smtp.local.test',
    resolver: resolve as never,
    disableArc: true,
    disableBimi: true,
  });
  const dkimResults = result.dkim.results.map((entry) => verdictOf(entry.status.result));
  const dkim: AuthVerdict = dkimResults.includes('pass')
    ? 'pass'
    : dkimResults.includes('fail')
      ? 'fail'
      : dkimResults.includes('error')
        ? 'error'
        : 'none';
  return {
    spf: result.spf === false ? 'none' : verdictOf(result.spf.status.result),
    dkim,
    dmarc: result.dmarc === false ? 'none' : verdictOf(result.dmarc.status.result),
    headers: result.headers,
  };
}

function refusal(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

export async function startInboundMailServer(port = 0): Promise<InboundMailServer> {
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const s3 = new S3Client({ forcePathStyle: true });
  // fauxqs names queues by a host the SDK cannot parse; the configured endpoint is the right one.
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  const resolve = dnsResolver();
  const { receivingDomain } = await import('../../shared/domains/registry.ts');
  // Per session: the recipients that are return paths, with the message each names.
  const returnPaths = new Map<string, Map<string, string>>();
  const accept = async (address: string, session: SMTPServerSession): Promise<boolean> => {
    if (await receivingDomain(address)) return true;
    const messageUuid = await returnPathMessage(address);
    if (messageUuid === undefined) return false;
    const known = returnPaths.get(session.id) ?? new Map<string, string>();
    known.set(address.toLowerCase(), messageUuid);
    returnPaths.set(session.id, known);
    return true;
  };

  const server = new SMTPServer({
    name: 'inbound-smtp.local.test',
    banner: 'svc-mail local inbound MX (Amazon SES receiving stand-in)',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: inboundLimits.maxBytes,
    logger: false,
    onClose(session) {
      returnPaths.delete(session.id);
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= inboundLimits.maxRecipients) {
        return callback(refusal(452, '4.5.3 Too many recipients'));
      }
      accept(address.address, session).then(
        (accepted) =>
          accepted
            ? callback()
            : callback(
                refusal(550, '5.1.1 Recipient address rejected: the domain does not receive mail here'),
              ),
        () => callback(refusal(451, '4.3.0 Temporary failure: try again later')),
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Past the limit nothing more is kept; smtp-server marks the stream and the end refuses it.
        if (bytes <= inboundLimits.maxBytes) chunks.push(chunk);
      });
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        if (
          (stream as unknown as { sizeExceeded?: boolean }).sizeExceeded ||
          bytes > inboundLimits.maxBytes
        ) {
          return callback(refusal(552, '5.3.4 Message size exceeds the fixed maximum message size (40 MB)'));
        }
        deliver(Buffer.concat(chunks), session).then(
          (messageId) => callback(null, `Ok ${messageId}`),
          (error: unknown) => {
            process.stderr.write(
              `inbound mail server: ${error instanceof Error ? error.message : String(error)}\n`,
            );
            callback(refusal(451, '4.3.0 Temporary failure: try again later'));
          },
        );
      });
    },
  });

  /** Feedback to return paths first (recorded again harmlessly if the rest fails), then receipt. */
  async function deliver(raw: Buffer, session: SMTPServerSession): Promise<string> {
    const known = returnPaths.get(session.id);
    const recipients = session.envelope.rcptTo.map((entry) => entry.address.toLowerCase());
    const feedback = new Set(recipients.flatMap((address) => known?.get(address) ?? []));
    for (const messageUuid of feedback) await deliverFeedback(raw, messageUuid);
    const received = recipients.filter((address) => !known?.has(address));
    return received.length > 0 ? receive(raw, session, received) : sesMessageId();
  }

  async function receive(raw: Buffer, session: SMTPServerSession, recipients: string[]): Promise<string> {
    const messageId = sesMessageId();
    const now = new Date();
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const auth = await checkAuthentication(raw, session, resolve);
    const client = session.remoteAddress.replace(/^::ffff:/, '');
    // The trace headers SES prepends; `for` only when there is one recipient, as MTAs write it.
    const trace = [
      `Return-Path: <${mailFrom}>`,
      `Received: from ${session.hostNameAppearsAs} (${session.clientHostname} [${client}])\r\n by inbound-smtp.local.test with SMTP id ${messageId}${recipients.length === 1 ? `\r\n for ${recipients[0]}` : ''};\r\n ${now.toUTCString()}`,
      auth.headers.trimEnd(),
    ].join('\r\n');
    const objectKey = `${bucketDefinition.inboundRawPrefix}${messageId}`;
    const bucket = process.env.BUCKET_NAME as string;
    // Multipart above 5 MB, as SES may store up to 40 MB (the S3 emulator takes at most 11 MB a request).
    await new Upload({
      client: s3,
      params: {
        Bucket: bucket,
        Key: objectKey,
        Body: Buffer.concat([Buffer.from(`${trace}\r\n`), raw]),
        ContentType: 'message/rfc822',
      },
      partSize: 5 * 1024 * 1024,
    }).done();
    // SES's receipt notification for an S3 action (the fields the inbound function reads, and
    // those SES always sends beside them).
    const notification = {
      notificationType: 'Received',
      mail: {
        timestamp: now.toISOString(),
        source: mailFrom,
        messageId,
        destination: recipients,
        headersTruncated: false,
      },
      receipt: {
        timestamp: now.toISOString(),
        processingTimeMillis: Date.now() - now.getTime(),
        recipients,
        spfVerdict: { status: sesStatusOf(auth.spf) },
        dkimVerdict: { status: sesStatusOf(auth.dkim) },
        dmarcVerdict: { status: sesStatusOf(auth.dmarc) },
        action: {
          type: 'S3',
          topicArn: `arn:aws:sns:${region}:000000000000:svc-mail-inbound`,
          bucketName: bucket,
          objectKeyPrefix: bucketDefinition.inboundRawPrefix,
          objectKey,
        },
      },
    };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: process.env.INBOUND_QUEUE_URL as string,
        MessageBody: JSON.stringify(notification),
      }),
    );
    return messageId;
  }

  await new Promise<void>((done, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => done());
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: async () => {
      await new Promise<void>((done) => server.close(() => done()));
      s3.destroy();
      sqs.destroy();
    },
  };
}

/**
 * The local host's worker: the inbound MX, on INBOUND_SMTP_PORT (default: a free port). Where it
 * listens goes to INBOUND_SMTP_URL (and host.json's `inbound_smtp_port`), not back into
 * INBOUND_SMTP_PORT: the host's environment is inherited by processes it starts, and another host
 * started from one must not try to listen on this one's port.
 */
export function inboundMailWorker(): LocalWorker {
  let server: InboundMailServer | undefined;
  return {
    name: 'inbound mail server (SES receiving)',
    async start({ env }) {
      server = await startInboundMailServer(envNumber('INBOUND_SMTP_PORT', 0));
      env.INBOUND_SMTP_URL = `smtp://127.0.0.1:${server.port}`;
    },
    async stop() {
      await server?.close();
    },
  };
}
