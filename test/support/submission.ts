import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  authMethod?: 'PLAIN' | 'LOGIN';
  from: string;
  to: readonly string[];
  raw: Buffer;
}

/** A nodemailer transport to the host's submission server, trusting its self-signed certificate. */
export function submissionTransport(
  key: string,
  options: {
    secure?: boolean;
    port?: number;
    pool?: boolean;
    ca?: string;
    authMethod?: 'PLAIN' | 'LOGIN';
  } = {},
) {
  const { submission } = hostInfo();
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: options.port ?? (options.secure ? submission.securePort : submission.port),
    secure: options.secure === true,
    requireTLS: options.secure !== true,
    tls: { ca: options.ca ?? submission.certificate, servername: 'localhost' },
    auth: { user: 'apikey', pass: key },
    ...(options.authMethod === undefined ? {} : { authMethod: options.authMethod }),
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

/**
 * A real HTTP proxy in front of the gateway that answers the API's rate-limit refusal (429, code
 * 115, Retry-After) to the first `refusals` message sends, 503 (code 4) to everything while
 * `setDown(true)`, and forwards everything else.
 */
export async function rateLimitedGateway(
  target: string,
  refusals: number,
): Promise<{ url: string; refused(): number; setDown(down: boolean): void; close(): Promise<void> }> {
  let refused = 0;
  let down = false;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (down) {
      // The API unavailable, as the gateway answers a store outage.
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { code: 4, message: 'Failed to set up DB connection/transaction' } }),
      );
      return;
    }
    if (request.url === '/message/add-1.0' && refused < refusals) {
      refused += 1;
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      response.end(JSON.stringify({ error: { code: 115, message: 'Too many requests' } }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        ([name]) => !['host', 'content-length', 'connection'].includes(name),
      ),
    ) as Record<string, string>;
    const answer = await fetch(new URL(request.url ?? '/', target), {
      method: request.method,
      headers,
      ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
    });
    response.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    response.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    setDown: (value) => {
      down = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
