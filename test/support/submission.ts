import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { hostInfo } from './host.ts';

/** What the submission server answered to one message: the reply and the uuid it names. */
export interface SubmissionResult {
  response: string;
  uuid: string;
}

export interface SubmitOptions {
  key: string;
  /** Implicit TLS (the `securePort`) instead of STARTTLS. */
  secure?: boolean;
  port?: number;
  from: string;
  to: readonly string[];
  raw: Buffer;
}

/** A nodemailer transport to the host's submission server, trusting its self-signed certificate. */
export function submissionTransport(
  key: string,
  options: { secure?: boolean; port?: number; pool?: boolean } = {},
) {
  const { submission } = hostInfo();
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: options.port ?? (options.secure ? submission.securePort : submission.port),
    secure: options.secure === true,
    requireTLS: options.secure !== true,
    tls: { ca: submission.certificate, servername: 'localhost' },
    auth: { user: 'apikey', pass: key },
    ...(options.pool ? { pool: true, maxConnections: 1 } : {}),
  } as Parameters<typeof nodemailer.createTransport>[0]);
}

export const queuedAs = /^250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/;

export async function submit(options: SubmitOptions): Promise<SubmissionResult> {
  const transport = submissionTransport(options.key, options);
  try {
    const info = await transport.sendMail({
      envelope: { from: options.from, to: [...options.to] },
      raw: options.raw,
    });
    const uuid = queuedAs.exec(info.response)?.[1];
    if (uuid === undefined) throw new Error(`unexpected reply: ${info.response}`);
    return { response: info.response, uuid };
  } finally {
    transport.close();
  }
}

/** A raw RFC 5322 message as a mail client builds it (nodemailer's composer). */
export function composeRaw(mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  const node = new MailComposer(mail).compile();
  // As a client that submits may: Bcc stays in the header, and the server must remove it.
  (node as unknown as { keepBcc: boolean }).keepBcc = true;
  return node.build();
}
