import nodemailer from 'nodemailer';
import { envString } from '../../platform/config/env.ts';
import type { MailTransport, OutgoingMail, RecipientResult, TransportResult } from './transport.ts';
import { rewrittenHeadersOf, TransportError } from './transport.ts';

/**
 * SMTP through nodemailer to the relay at SMTP_URL (`smtp://user:pass@host:587`, `smtps://…`).
 * Per-recipient results come from the RCPT replies (nodemailer's accepted / rejected /
 * rejectedErrors). The message uuid travels as the DSN envelope id (ENVID) when the relay offers DSN.
 * Credentials only ever travel encrypted: see `relayTlsOptions`.
 */
interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  recipient?: string;
  rejected?: string[];
  rejectedErrors?: SmtpError[];
}

const transientCodes = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'EAUTH',
  'ETLS',
  'ECONNREFUSED',
  'ECONNRESET',
]);

/**
 * Whenever the relay gets credentials (in SMTP_URL or from SMTP_SECRET_ARN), the connection must be
 * encrypted before AUTH: `smtps://` is TLS from the first byte, and on `smtp://` nodemailer's
 * `requireTLS` issues STARTTLS and fails the send when the relay does not offer it, instead of
 * sending the password in clear. SMTP_ALLOW_CLEARTEXT_AUTH=true lifts the rule for a relay on a
 * trusted network (docs/delivery.md, "Relay").
 */
export function relayTlsOptions(
  url: string,
  hasSecretCredentials: boolean,
  allowCleartext: boolean,
): { requireTLS?: true } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {};
  }
  const credentials = hasSecretCredentials || parsed.username !== '' || parsed.password !== '';
  if (!credentials || allowCleartext || parsed.protocol === 'smtps:') return {};
  return { requireTLS: true };
}

export async function createSmtpTransport(): Promise<MailTransport> {
  const url = envString('SMTP_URL');
  if (url === undefined) throw new Error('SMTP_URL is not set');
  const finalHop = envString('SMTP_FINAL_HOP') === 'true';
  // On AWS the relay's credentials live in Secrets Manager (SMTP_SECRET_ARN), read once per cold
  // start, never in the environment; SMTP_URL then names only the host.
  const secretArn = envString('SMTP_SECRET_ARN');
  const auth =
    secretArn === undefined
      ? undefined
      : await (await import('../../platform/aws/secrets.ts')).smtpCredentials(secretArn);
  const tls = relayTlsOptions(
    url,
    auth !== undefined,
    envString('SMTP_ALLOW_CLEARTEXT_AUTH', 'false')?.toLowerCase() === 'true',
  );
  const transporter = nodemailer.createTransport({
    url,
    ...(auth === undefined ? {} : { auth }),
    ...tls,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  } as never);
  return {
    name: 'smtp',
    rewrittenHeaders: rewrittenHeadersOf.smtp,
    async send(mail: OutgoingMail): Promise<TransportResult> {
      try {
        const info = (await transporter.sendMail({
          envelope: mail.envelope,
          raw: mail.raw,
          dsn: { id: mail.messageUuid, return: 'headers', notify: ['failure', 'delay'] },
        })) as {
          accepted?: unknown[];
          rejectedErrors?: SmtpError[];
          rejected?: unknown[];
          response?: string;
        };
        const response = info.response ?? '';
        const recipients: RecipientResult[] = [
          ...(info.accepted ?? []).map((email) => ({
            email: String(email),
            outcome: 'accepted' as const,
            permanent: true,
            response,
          })),
          ...rejectedResults(info.rejected ?? [], info.rejectedErrors ?? []),
        ];
        return { response, messageId: queueIdOf(response), recipients, finalHop };
      } catch (error) {
        const failure = error as SmtpError;
        if (failure.code === 'EENVELOPE' && (failure.rejected?.length ?? 0) > 0) {
          // Every recipient was refused at RCPT: nothing was sent, each recipient has its answer.
          const recipients = rejectedResults(failure.rejected ?? [], failure.rejectedErrors ?? []);
          if (recipients.some((recipient) => recipient.permanent)) {
            return { response: failure.response, recipients, finalHop };
          }
          throw new TransportError(`Relay refused every recipient for now: ${short(failure)}`, false, {
            cause: error,
          });
        }
        if (tls.requireTLS === true && failure.code === 'ETLS') {
          // Retried like any TLS failure (a broken certificate may be mended); never sent in clear.
          throw new TransportError(
            `Relay refused: credentials are sent only over TLS and the relay offered no STARTTLS (${short(failure)}); set SMTP_ALLOW_CLEARTEXT_AUTH=true only for a relay on a trusted network`,
            false,
            { cause: error },
          );
        }
        const code = failure.responseCode;
        const permanent = code !== undefined ? code >= 500 : !transientCodes.has(failure.code ?? '');
        throw new TransportError(`Relay error: ${short(failure)}`, permanent && code !== undefined, {
          cause: error,
        });
      }
    },
  };
}

function rejectedResults(rejected: unknown[], errors: SmtpError[]): RecipientResult[] {
  return rejected.map((email) => {
    const address = String(email);
    const error = errors.find((entry) => entry.recipient?.toLowerCase() === address.toLowerCase());
    const code = error?.responseCode ?? 550;
    return {
      email: address,
      outcome: 'rejected' as const,
      permanent: code >= 500,
      response: error?.response ?? `${code} recipient refused`,
    };
  });
}

function short(error: SmtpError): string {
  const text = error.response ?? error.message ?? String(error);
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** Relays usually name their queue id in the final reply ("250 2.0.0 Ok: queued as 4F3A…"). */
function queueIdOf(response: string): string | undefined {
  return (
    response.match(/queued as ([^\s]+)/i)?.[1] ??
    response.match(/^250[ -](?:\d\.\d\.\d )?(?:Ok:? )?<?([^\s>]+)>?$/i)?.[1]
  );
}
