import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import type { LocalWorker } from './workers.ts';

/**
 * The recipients' mail server of the local host. Every message it receives is written to
 * `<DATA_DIR>/outbox/<message_uuid>.eml` (the uuid is the DSN envelope id the sender passes, else
 * the one in the per-message MAIL FROM, else the `<uuid@…>` Message-ID), with its envelope (MAIL FROM, RCPT TO) beside it in
 * `<message_uuid>.envelope.json`; every transaction is also appended to `outbox/transactions.jsonl`,
 * so tests can count deliveries, and each recipient's copy is kept as
 * `outbox/copies/<message_uuid>/<recipient>.eml` (a tracked message sends each recipient its own).
 * Like SES's mailbox simulator, a recipient whose local part starts with `bounce` is refused with
 * `550 5.1.1`; one whose local part starts with `greylist` is refused once per message with
 * `451 4.7.1` and accepted on the next try, as a greylisting server does. Refusals are logged in
 * `outbox/refusals.jsonl`; every other recipient is accepted.
 */
export const bounceReply = '5.1.1 Recipient address rejected: mailbox unavailable (local bounce simulator)';
export const greylistReply = '4.7.1 Greylisted: please try again later (local greylisting simulator)';

const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

export interface SmtpSink {
  port: number;
  outbox: string;
  close(): Promise<void>;
}

export async function startSmtpSink(dataDir: string, port = 0): Promise<SmtpSink> {
  const outbox = join(dataDir, 'outbox');
  mkdirSync(outbox, { recursive: true });
  // Greylisted recipients already refused once, per message: `<message_uuid> <address>`.
  const greylisted = new Set<string>();
  const server = new SMTPServer({
    name: 'mx.local.test',
    banner: 'svc-mail local recipient MTA',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    // Offer DSN (smtp-server hides it by default), so the sender's ENVID (the message uuid) arrives
    // with MAIL FROM and names the message even when every recipient is refused.
    hideDSN: false,
    size: 64 * 1024 * 1024,
    logger: false,
    onRcptTo(address, session, callback) {
      const local = address.address.split('@')[0] ?? '';
      const envelopeId = (session.envelope as { dsn?: { envid?: string | null } }).dsn?.envid ?? undefined;
      const uuid =
        uuidFrom(envelopeId) ??
        uuidFrom(session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined) ??
        null;
      // Refusals are logged too (outbox/refusals.jsonl), so a test can tell "refused" from "never tried".
      const refuse = (code: number, reply: string) => {
        appendFileSync(
          join(outbox, 'refusals.jsonl'),
          `${JSON.stringify({
            message_uuid: uuid,
            recipient: address.address,
            response: `${code} ${reply}`,
            at: new Date().toISOString(),
          })}\n`,
        );
        const error = new Error(reply) as Error & { responseCode: number };
        error.responseCode = code;
        return callback(error);
      };
      if (/^bounce/i.test(local)) return refuse(550, bounceReply);
      const greylistKey = `${uuid} ${address.address.toLowerCase()}`;
      if (/^greylist/i.test(local) && !greylisted.has(greylistKey)) {
        greylisted.add(greylistKey);
        return refuse(451, greylistReply);
      }
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const envelopeId = (session.envelope as { dsn?: { envid?: string | null } }).dsn?.envid ?? undefined;
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined;
        // The DSN envelope id, else the per-message bounce address (<uuid>@bounce.<domain>), else
        // the Message-ID: an EML may bring its own Message-ID without the uuid.
        const uuid =
          uuidFrom(envelopeId) ?? uuidFrom(mailFrom) ?? uuidFrom(messageIdOf(raw)) ?? `unknown-${Date.now()}`;
        const transaction = {
          message_uuid: uuid,
          mail_from: mailFrom ?? null,
          recipients: session.envelope.rcptTo.map((entry) => entry.address),
          bytes: raw.length,
          at: new Date().toISOString(),
        };
        writeFileSync(join(outbox, `${uuid}.eml`), raw);
        // The envelope beside the message, as the receiving MTA saw it (a message has no header for
        // its envelope sender or its blind copies).
        writeFileSync(join(outbox, `${uuid}.envelope.json`), `${JSON.stringify(transaction, null, 2)}\n`);
        const copies = join(outbox, 'copies', uuid);
        mkdirSync(copies, { recursive: true });
        for (const recipient of transaction.recipients) {
          writeFileSync(join(copies, `${recipient.toLowerCase().replace(/[/\\]/g, '_')}.eml`), raw);
        }
        appendFileSync(join(outbox, 'transactions.jsonl'), `${JSON.stringify(transaction)}\n`);
        callback(null, `2.0.0 Ok: queued as ${uuid}`);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const actualPort = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: actualPort,
    outbox,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function uuidFrom(text: string | undefined): string | undefined {
  return text?.match(uuidPattern)?.[0]?.toLowerCase();
}

function messageIdOf(raw: Buffer): string | undefined {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
  return head.match(/^message-id:\s*(.+)$/im)?.[1];
}

/** The local host's worker: starts the sink and points the sender's SMTP transport at it. */
export function smtpSinkWorker(): LocalWorker {
  let sink: SmtpSink | undefined;
  return {
    name: 'smtp-sink',
    async start({ dataDir, env }) {
      sink = await startSmtpSink(dataDir, Number(process.env.SMTP_SINK_PORT ?? 0));
      env.MAIL_TRANSPORT = process.env.MAIL_TRANSPORT ?? 'smtp';
      env.SMTP_URL = process.env.SMTP_URL ?? `smtp://127.0.0.1:${sink.port}`;
      // The embedded server is the recipients' own MTA: accepted means delivered.
      env.SMTP_FINAL_HOP =
        process.env.SMTP_FINAL_HOP ?? (process.env.SMTP_URL === undefined ? 'true' : 'false');
      env.OUTBOX_DIR = sink.outbox;
    },
    async stop() {
      await sink?.close();
    },
  };
}
