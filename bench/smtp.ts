import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { addKey } from '../shared/apikeys/add.ts';
import { selfSignedCertificate, type TlsMaterial } from '../submission/certificate.ts';
import { requestBodyOf, submissionOf } from '../submission/message-body.ts';
import { holdProxy } from './hold-proxy.ts';
import type { BenchHost } from './host.ts';
import { type Figure, fmt, fmtFigure, progress, sideBySide } from './stats.ts';
import { type SubmissionMemory, startSubmissionProcess } from './submission-server.ts';
import { checkTarget } from './targets.ts';

/**
 * `npm run bench` section 17, SMTP submission (docs/smtp.md), against the submission server running
 * as its own process (submission/main.ts) in front of the local host's API:
 * - a 10 KB message from 8 parallel clients over STARTTLS, each a pooled nodemailer transport
 *   reusing its connection, against the same message through `POST /message/add-1.0` from 8
 *   parallel clients with the same key, in interleaved rounds;
 * - the process's memory with 100 idle authenticated connections, and with 8 messages of 4 MB in
 *   flight at once (a proxy holds their adds until all 8 have reached the API).
 */
const clients = 8;
const idleConnections = 100;
const largeMessages = 8;
const largeBytes = 4 * 1024 * 1024;
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;

interface Prepared {
  raw: Buffer;
  /** What the submission server posts for this message: the API side sends the same. */
  apiBody: string;
}

function compose(from: string, to: string, text: string): Promise<Buffer> {
  return new MailComposer({
    from,
    to,
    subject: 'Benchmark over SMTP',
    text,
    messageId: `<${randomUUID()}@${from.split('@')[1]}>`,
  })
    .compile()
    .build();
}

/** A 10 KB text/plain message as a mailer builds it, each with its own Message-ID. */
async function prepare(from: string, count: number): Promise<Prepared[]> {
  const line = 'The quick brown fox jumps over the lazy dog, and the benchmark counts the bytes.\n';
  const text = line.repeat(Math.ceil(10_000 / line.length)).slice(0, 10_000);
  const to = 'reader@recipient.test';
  return Promise.all(
    Array.from({ length: count }, async () => {
      const raw = await compose(from, to, text);
      return { raw, apiBody: requestBodyOf(submissionOf(raw, from, [to])).toString() };
    }),
  );
}

/** A message of exactly 4 MB in lines of 78 bytes, ending with a line break as SMTP keeps it. */
function largeMessage(from: string): Buffer {
  const head = `From: ${from}\r\nTo: reader@recipient.test\r\nSubject: Large benchmark message\r\n\r\n`;
  const room = largeBytes - head.length;
  const line = `${'x'.repeat(76)}\r\n`;
  const last = `${'y'.repeat((room % line.length) + line.length - 2)}\r\n`;
  return Buffer.from(head + line.repeat(Math.floor(room / line.length) - 1) + last);
}

function tlsOptions(tls: TlsMaterial) {
  return { ca: tls.cert, servername: 'localhost' };
}

const queuedAs = /^250 2\.0\.0 Ok: queued as [0-9a-f-]{36}$/;

/** Runs `count` sends from 8 clients at once, each taking the next message when its last is done. */
async function fromClients<T>(
  workers: readonly T[],
  queue: Prepared[],
  count: number,
  send: (worker: T, message: Prepared) => Promise<void>,
) {
  let left = count;
  await Promise.all(
    workers.map(async (worker) => {
      while (left > 0) {
        left -= 1;
        await send(worker, queue.pop() as Prepared);
      }
    }),
  );
}

function perMessage(f: Figure, messages: number): Figure {
  return { ...f, median: f.median / messages, min: f.min / messages, max: f.max / messages };
}

async function throughput(host: BenchHost, key: string, from: string, quick: boolean, tls: TlsMaterial) {
  const rounds = quick ? 6 : 20;
  const perRound = clients * (quick ? 2 : 5);
  const server = await startSubmissionProcess({ apiUrl: host.url, tls });
  const transports = Array.from({ length: clients }, () =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: server.port,
      secure: false,
      requireTLS: true,
      tls: tlsOptions(tls),
      auth: { user: 'apikey', pass: key },
      pool: true,
      maxConnections: 1,
    }),
  );
  try {
    // Both sides take messages from one prepared stock, so neither pays for composing.
    const stock = await prepare(from, (rounds + 3) * perRound * 2);
    const overSmtp = () =>
      fromClients(transports, stock, perRound, async (transport, message) => {
        const info = await transport.sendMail({
          envelope: { from, to: ['reader@recipient.test'] },
          raw: message.raw,
        });
        if (!queuedAs.test(info.response)) throw new Error(`SMTP bench: ${info.response}`);
      });
    const overApi = () =>
      fromClients(Array.from({ length: clients }), stock, perRound, async (_, message) => {
        const response = await fetch(`${host.url}/message/add-1.0`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: message.apiBody,
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`SMTP bench: API add ${response.status} ${text}`);
      });
    const result = await sideBySide(rounds, overSmtp, overApi);
    return {
      rounds,
      perRound,
      smtp: perMessage(result.a, perRound),
      api: perMessage(result.b, perRound),
      ratio: result.ratio,
    };
  } finally {
    for (const transport of transports) transport.close();
    await server.stop();
  }
}

function connect(port: number, tls: TlsMaterial, key: string): Promise<SMTPConnection> {
  const connection = new SMTPConnection({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: tlsOptions(tls),
  });
  return new Promise((resolve, reject) => {
    connection.once('error', reject);
    connection.connect(() =>
      connection.login({ user: 'apikey', pass: key }, (error) =>
        error ? reject(error) : resolve(connection),
      ),
    );
  });
}

async function memory(host: BenchHost, key: string, from: string, tls: TlsMaterial) {
  const proxy = await holdProxy(host.url);
  // Room for 100 connections from one address and one key (the defaults allow 50 of each).
  const server = await startSubmissionProcess({
    apiUrl: proxy.url,
    tls,
    env: {
      SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS: String(idleConnections + clients),
      SUBMISSION_MAX_CONNECTIONS_PER_KEY: String(idleConnections + clients),
    },
  });
  try {
    const started = await server.memory();
    const open: SMTPConnection[] = [];
    for (let batch = 0; batch < idleConnections; batch += 10)
      open.push(...(await Promise.all(Array.from({ length: 10 }, () => connect(server.port, tls, key)))));
    const idle = await server.memory();
    for (const connection of open) connection.quit();

    const raw = largeMessage(from);
    const peakReset = server.resetPeak();
    // The server's API call gives up after 30 s: the held ones are let go well before that.
    const allHeld = proxy.holdAdds(largeMessages, 10_000);
    const sends = Array.from({ length: largeMessages }, async () => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: server.port,
        secure: false,
        requireTLS: true,
        tls: tlsOptions(tls),
        auth: { user: 'apikey', pass: key },
      });
      try {
        const info = await transport.sendMail({ envelope: { from, to: ['reader@recipient.test'] }, raw });
        if (!queuedAs.test(info.response)) throw new Error(`SMTP bench: ${info.response}`);
      } finally {
        transport.close();
      }
    });
    const heldCount = await allHeld;
    const inFlight = await server.memory();
    proxy.release();
    await Promise.all(sends);
    const afterLarge = await server.memory();
    const whole = proxy.acceptedBytes().filter((bytes) => bytes === raw.length).length;
    if (whole !== largeMessages)
      throw new Error(`SMTP bench: ${whole} of ${largeMessages} large messages reached the API whole`);
    return { started, idle, inFlight, heldCount, peak: afterLarge.peakRss, peakReset };
  } finally {
    proxy.release();
    await server.stop();
    await proxy.close();
  }
}

const heap = (m: SubmissionMemory) => `${mb(m.heapUsed)} of ${mb(m.heapTotal)}`;

export async function smtpSection(
  host: BenchHost,
  account: string,
  from: string,
  quick: boolean,
): Promise<string[]> {
  progress('17 SMTP submission');
  const { key } = await addKey(
    { account, subject: account, scopes: new Set(['messages:read', 'messages:send']), credential: 'jwt' },
    { name: 'bench smtp', scopes: ['messages:send'] },
  );
  const tls = selfSignedCertificate();
  const speed = await throughput(host, key, from, quick, tls);
  progress(
    `  per message: SMTP ${fmt(speed.smtp.median)} ms, API ${fmt(speed.api.median)} ms, ratio ${fmt(speed.ratio.median, 2)}`,
  );
  const held = await memory(host, key, from, tls);
  progress(
    `  RSS: idle ${mb(held.started.rss)}, 100 connections ${mb(held.idle.rss)}, 8 × 4 MB peak ${mb(held.peak)}`,
  );
  const largest = Math.max(held.idle.rss, held.peak);
  return [
    '### 17. SMTP submission',
    '',
    `The submission server runs as its own process (\`submission/main.ts\`) in front of the local host's API. Throughput: ${speed.rounds} interleaved rounds (after 3 warm-up rounds) of ${speed.perRound} messages of 10 KB from ${clients} parallel clients a side: over SMTP each client is a pooled nodemailer transport keeping its connection (STARTTLS, AUTH with an API key); through the API each sends \`POST /message/add-1.0\` with the same key and the same message as \`eml\`, the very body the submission server posts, so the ratio is what the SMTP hop adds. Per-message time: a round's time over its messages.`,
    '',
    '| path | ms per message | ratio (SMTP / API, per round) | target |',
    '|---|---:|---:|---|',
    `| SMTP, ${clients} clients, connection reused | ${fmtFigure(speed.smtp, 2)} | ${fmtFigure(speed.ratio, 2)} | ≤ 1.5: ${checkTarget('smtp-throughput', fmtFigure(speed.ratio, 2), speed.ratio.median <= 1.5)} |`,
    `| \`POST /message/add-1.0\` (eml), ${clients} clients | ${fmtFigure(speed.api, 2)} | 1 | |`,
    '',
    '| submission process | RSS | heap used of total |',
    '|---|---:|---:|',
    `| listening, no connection | ${mb(held.started.rss)} | ${heap(held.started)} |`,
    `| ${idleConnections} idle authenticated connections (STARTTLS) | ${mb(held.idle.rss)} | ${heap(held.idle)} |`,
    `| ${largeMessages} messages of 4 MB in flight (${held.heldCount} of them held at the API at once) | ${mb(held.inFlight.rss)} | ${heap(held.inFlight)} |`,
    `| peak over the ${largeMessages} × 4 MB transactions (VmHWM${held.peakReset ? ', reset before them' : ', since start'}) | ${mb(held.peak)} | |`,
    '',
    `Target: the submission process ≤ 256 MB: ${checkTarget('smtp-memory', `${mb(held.idle.rss)} with ${idleConnections} connections, ${mb(held.peak)} peak with ${largeMessages} × 4 MB`, largest <= 256 * 1024 * 1024)} (largest ${mb(largest)}).`,
    '',
  ];
}
