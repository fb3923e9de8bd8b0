import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { type ApiClient, apiClient, type Credential } from './api-client.ts';
import { CredentialCache } from './credential-cache.ts';
import { ConnectionGuard, type GuardLimits } from './guard.ts';
import { domainOf, type LogSink, logLine, metricLine } from './log.ts';
import { requestBodyOf, submissionOf } from './message-body.ts';
import { replyForApiError, type SmtpReply, smtpError } from './smtp-replies.ts';

/**
 * The SMTP submission server (docs/smtp.md): STARTTLS and implicit-TLS listeners whose AUTH
 * password is an API key, and whose every message becomes one `POST /message/add-1.0` with that key.
 */
export interface SubmissionOptions extends Partial<GuardLimits> {
  /** The public API's base URL. */
  apiUrl: string;
  tls: { key: string; cert: string };
  /** The name in the greeting and EHLO answer. */
  hostName?: string;
  /** The largest raw message accepted (`SIZE`). */
  maxMessageBytes?: number;
  /** How long a checked key is trusted without asking the API again. */
  credentialTtlMs?: number;
  /** Idle time allowed between commands. */
  commandTimeoutMs?: number;
  /** Time allowed for one DATA transfer. */
  dataTimeoutMs?: number;
  /** AUTH failures per address (within the window) after which AUTH is refused outright. */
  maxAuthFailuresPerAddress?: number;
  maxRecipients?: number;
  log?: LogSink;
  api?: ApiClient;
}

/**
 * The largest message the API takes: its 6,000,000-byte request body holds the message as base64
 * (4 bytes for every 3) beside the JSON fields, for which 64 KiB is kept.
 */
export const apiMaxMessageBytes = Math.floor(((6_000_000 - 65_536) * 3) / 4);

export const defaultLimits: GuardLimits = {
  maxConnectionsPerAddress: 50,
  maxConnectionsPerKey: 50,
  authFailureDelayMs: 1_000,
  maxAuthFailureDelayMs: 10_000,
  authFailureWindowMs: 15 * 60_000,
};

export interface SubmissionServer {
  /** Starts the STARTTLS listener on `port` and the implicit-TLS one on `securePort` (0: a free port). */
  listen(port: number, securePort: number, host?: string): Promise<{ port: number; securePort: number }>;
  close(): Promise<void>;
}

interface SessionUser {
  key: string;
  keyName: string;
  credential: Credential;
}

/** The key a session authenticated with; smtp-server may hold other values in `user` before AUTH. */
function userOf(session: SMTPServerSession): SessionUser | undefined {
  const user = session.user as Partial<SessionUser> | undefined;
  return user?.credential === undefined ? undefined : (user as SessionUser);
}

export function createSubmissionServer(options: SubmissionOptions): SubmissionServer {
  const sink = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const limits: GuardLimits = { ...defaultLimits, ...definedOnly(options) };
  const guard = new ConnectionGuard(limits);
  const api = options.api ?? apiClient(options.apiUrl);
  const credentials = new CredentialCache((key) => api.whoami(key), options.credentialTtlMs ?? 60_000);
  const maxBytes = options.maxMessageBytes ?? apiMaxMessageBytes;
  const maxAuthFailures = options.maxAuthFailuresPerAddress ?? 30;
  const maxRecipients = options.maxRecipients ?? 50;
  const dataTimeoutMs = options.dataTimeoutMs ?? 10 * 60_000;
  const counted = new Set<string>();
  const keyed = new Map<string, string>();
  const servers: SMTPServer[] = [];

  const reject = (session: SMTPServerSession, reply: SmtpReply) => {
    metricLine(sink, 'SmtpRejections', reply.reason);
    logLine(sink, 'WARN', 'smtp rejected', {
      session: session.id,
      remote_address: session.remoteAddress,
      account: userOf(session)?.credential.account,
      reason: reply.reason,
      reply: reply.responseCode,
    });
    return smtpError(reply);
  };

  const handlers: Partial<SMTPServerOptions> = {
    name: options.hostName ?? 'localhost',
    banner: 'svc-mail submission: AUTH with an API key as the password',
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    authOptional: false,
    size: maxBytes,
    key: options.tls.key,
    cert: options.tls.cert,
    socketTimeout: options.commandTimeoutMs ?? 60_000,
    logger: false,
    // A stop waits this long for transactions under way before it closes their connections.
    closeTimeout: 5_000,
    disabledCommands: [],
    maxAllowedUnauthenticatedCommands: 10,
    onConnect(session, callback) {
      if (!guard.openConnection(session.remoteAddress)) {
        return callback(
          reject(session, {
            responseCode: 421,
            message: '4.7.0 Too many connections from your address, try again later',
            reason: 'address_connections',
          }),
        );
      }
      counted.add(session.id);
      metricLine(sink, 'SmtpConnections');
      callback();
    },
    onClose(session) {
      if (counted.delete(session.id)) guard.closeConnection(session.remoteAddress);
      const keyName = keyed.get(session.id);
      if (keyName !== undefined) {
        keyed.delete(session.id);
        guard.closeKey(keyName);
      }
    },
    onAuth(auth, session, callback) {
      const address = session.remoteAddress;
      if (guard.authFailures(address) >= maxAuthFailures) {
        return callback(
          reject(session, {
            responseCode: 421,
            message: '4.7.0 Too many failed logins from your address, try again later',
            reason: 'auth_failures',
          }),
        );
      }
      const key = auth.password ?? '';
      const refuse = (text: string, reason: string) => {
        const delay = guard.recordAuthFailure(address);
        metricLine(sink, 'SmtpAuthFailures', reason);
        logLine(sink, 'WARN', 'smtp auth refused', { session: session.id, remote_address: address, reason });
        setTimeout(() => callback(smtpError({ responseCode: 535, message: text, reason })), delay).unref();
      };
      credentials.check(key).then(
        (answer) => {
          if (!answer.ok) {
            if ('unreachable' in answer || answer.status >= 500 || answer.error.code === 115)
              return callback(
                reject(session, {
                  responseCode: 454,
                  message: '4.7.0 The credential cannot be checked now, try again later',
                  reason: 'api_unavailable',
                }),
              );
            return refuse('5.7.8 Authentication credentials invalid (the password is an API key)', 'bad_key');
          }
          if (!answer.data.scopes.includes('messages:send'))
            return refuse('5.7.8 This API key may not send messages (scope messages:send)', 'missing_scope');
          const keyName = answer.data.key_id ?? createHash('sha256').update(key).digest('base64url');
          if (!guard.openKey(keyName)) {
            return callback(
              reject(session, {
                responseCode: 421,
                message: '4.7.0 Too many connections for this key, try again later',
                reason: 'key_connections',
              }),
            );
          }
          keyed.set(session.id, keyName);
          logLine(sink, 'INFO', 'smtp authenticated', {
            session: session.id,
            remote_address: address,
            account: answer.data.account,
            key_id: answer.data.key_id,
          });
          callback(null, { user: { key, keyName, credential: answer.data } satisfies SessionUser });
        },
        () =>
          callback(
            reject(session, {
              responseCode: 454,
              message: '4.7.0 The credential cannot be checked now, try again later',
              reason: 'api_unavailable',
            }),
          ),
      );
    },
    onMailFrom(address, session, callback) {
      const user = userOf(session);
      // smtp-server already refuses MAIL before AUTH (authOptional is false); this holds whatever changes.
      if (user === undefined)
        return callback(
          reject(session, { responseCode: 530, message: '5.7.0 Authentication required', reason: 'no_auth' }),
        );
      const domain = address.address.includes('@') ? domainOf(address.address) : '';
      if (!user.credential.domains.some((allowed) => allowed.toLowerCase() === domain))
        return callback(
          reject(session, {
            responseCode: 550,
            message: `5.7.1 This key may not send from ${domain === '' ? 'the null sender' : domain} (code 113: Access denied on required ACLs)`,
            reason: 'sender_domain',
          }),
        );
      callback();
    },
    onRcptTo(_address, session, callback) {
      if (userOf(session) === undefined)
        return callback(
          reject(session, { responseCode: 530, message: '5.7.0 Authentication required', reason: 'no_auth' }),
        );
      if (session.envelope.rcptTo.length >= maxRecipients)
        return callback(
          reject(session, {
            responseCode: 452,
            message: `4.5.3 At most ${maxRecipients} recipients per message`,
            reason: 'recipients',
          }),
        );
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let timedOut = false;
      const deadline = setTimeout(() => {
        timedOut = true;
        closeSession(session.id, '4.4.2 The message took too long to arrive, closing');
        stream.resume();
      }, dataTimeoutMs);
      deadline.unref();
      stream.on('data', (chunk: Buffer) => {
        if (!stream.sizeExceeded && !timedOut) chunks.push(chunk);
      });
      stream.on('error', (error) => {
        clearTimeout(deadline);
        callback(error);
      });
      stream.on('end', () => {
        clearTimeout(deadline);
        if (timedOut) return;
        const user = userOf(session);
        if (user === undefined || !session.envelope.mailFrom)
          return callback(
            reject(session, {
              responseCode: 530,
              message: '5.7.0 Authentication required',
              reason: 'no_auth',
            }),
          );
        if (stream.sizeExceeded)
          return callback(
            reject(session, {
              responseCode: 552,
              message: `5.3.4 Message too big: at most ${maxBytes} bytes`,
              reason: 'size',
            }),
          );
        const raw = Buffer.concat(chunks);
        chunks.length = 0;
        const submission = submissionOf(
          raw,
          session.envelope.mailFrom.address,
          session.envelope.rcptTo.map((recipient) => recipient.address),
        );
        const bytes = raw.length;
        api.addMessage(user.key, requestBodyOf(submission), submission.idempotencyKey).then((answer) => {
          if (!answer.ok) return callback(reject(session, replyForApiError(answer.error)));
          metricLine(sink, 'SmtpMessages');
          logLine(sink, 'INFO', 'smtp message queued', {
            session: session.id,
            account: user.credential.account,
            key_id: user.credential.key_id,
            message_uuid: answer.data.message_uuid,
            sender_domain: domainOf(session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
            recipients: session.envelope.rcptTo.length,
            bytes,
          });
          callback(null, `2.0.0 Ok: queued as ${answer.data.message_uuid}`);
        }, callback);
      });
    },
  };

  function closeSession(sessionId: string, text: string): void {
    for (const server of servers) {
      for (const connection of (server as unknown as { connections: Set<ConnectionHandle> }).connections) {
        if (connection.id !== sessionId) continue;
        connection.send(421, text);
        connection.close();
      }
    }
  }

  return {
    async listen(port, securePort, host = '127.0.0.1') {
      const plain = new SMTPServer({ ...handlers, secure: false });
      const secure = new SMTPServer({ ...handlers, secure: true });
      servers.push(plain, secure);
      const bound = await Promise.all(
        [plain, secure].map(
          (server, index) =>
            new Promise<number>((resolve, reject) => {
              server.server.once('error', reject);
              server.listen(index === 0 ? port : securePort, host, () => {
                server.server.off('error', reject);
                resolve((server.server.address() as AddressInfo).port);
              });
            }),
        ),
      );
      for (const server of servers)
        server.on('error', (error) => logLine(sink, 'ERROR', 'smtp server error', { error: error.message }));
      return { port: bound[0] as number, securePort: bound[1] as number };
    },
    async close() {
      await Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
      servers.length = 0;
    },
  };
}

interface ConnectionHandle {
  id: string;
  send(code: number, text: string): void;
  close(): void;
}

function definedOnly(options: Partial<GuardLimits>): Partial<GuardLimits> {
  return Object.fromEntries(
    (Object.keys(defaultLimits) as (keyof GuardLimits)[])
      .filter((name) => options[name] !== undefined)
      .map((name) => [name, options[name]]),
  );
}
