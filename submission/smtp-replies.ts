import type { ApiError } from './api-client.ts';

/** An SMTP reply for smtp-server: the callback's error carries the code and the text. */
export interface SmtpReply {
  responseCode: number;
  message: string;
  /** Why, for the log line and the rejection metric. */
  reason: string;
}

/** Retryable API answers: the client keeps the message and tries again later. */
const retryable = new Set([115, 4, 5, 1, 2, 3]);
/** The key stopped being valid between AUTH and DATA (revoked, expired). */
const credentialCodes = new Set([104, 105, 110]);

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 400);
}

function detailsOf(error: ApiError): string {
  const details = (error.details ?? [])
    .map((detail) => [detail.field, detail.message].filter(Boolean).join(': '))
    .filter((detail) => detail !== '')
    .join('; ');
  return details === '' ? '' : ` (${details})`;
}

/**
 * The API's answer to DATA as an SMTP reply (docs/smtp.md, "Replies"): rate limit and store
 * trouble are 451 (try again), a refused sender is 550 5.7.1, bad input 550 / an address 553,
 * always with the catalogue code and message in the text.
 */
export function replyForApiError(error: ApiError): SmtpReply {
  const text = oneLine(`code ${error.code}: ${error.message}${detailsOf(error)}`);
  if (error.code === 115) return { responseCode: 451, message: `4.7.0 ${text}`, reason: 'rate_limited' };
  if (retryable.has(error.code))
    return { responseCode: 451, message: `4.3.0 ${text}`, reason: 'api_unavailable' };
  if (error.code === 113) return { responseCode: 550, message: `5.7.1 ${text}`, reason: 'sender_refused' };
  if (error.code === 10000001) return { responseCode: 553, message: `5.1.3 ${text}`, reason: 'bad_address' };
  if (credentialCodes.has(error.code))
    return { responseCode: 535, message: `5.7.8 ${text}`, reason: 'credential_refused' };
  return { responseCode: 550, message: `5.6.0 ${text}`, reason: 'refused_by_api' };
}

export function smtpError(reply: SmtpReply): Error & { responseCode: number } {
  const error = new Error(reply.message) as Error & { responseCode: number };
  error.responseCode = reply.responseCode;
  return error;
}
