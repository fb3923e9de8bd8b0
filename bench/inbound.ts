import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Upload } from '@aws-sdk/lib-storage';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { registerDomain, setReceiving } from '../shared/domains/registry.ts';
import { s3 } from '../shared/platform/aws/s3.ts';
import type { BenchHost } from './host.ts';
import { fmt, progress, verdict } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * `npm run bench` section 8, inbound mail (docs/inbound.md), on the local host:
 * - latency: a 100 KB message with 2 attachments, from the end of SMTP DATA (the client's final
 *   `.`) to the first attempt of its `inbound.received` webhook at a receiver on loopback: inbound
 *   MX (SPF/DKIM/DMARC, S3, queue) → inbound function (parse, store) → table stream → fan-out →
 *   webhook queue → delivery. Target p95 ≤ 2 s.
 * - memory: the inbound function's bundle alone in a process (bench/function-process.ts, as Lambda
 *   runs it) parsing a 25 MB message that SES would have stored; its peak RSS above its idle RSS,
 *   as a multiple of the message size. Target ≤ 3. Beside it, for the choice of parser: postal-mime
 *   (the project's other MIME parser) parsing the same object in a process of its own.
 */
export async function inboundSection(options: {
  host: BenchHost;
  /** Where the cold-start section built every function's bundle (`<dir>/<id>/index.mjs`). */
  bundleDir: string;
  quick: boolean;
}): Promise<string[]> {
  const { host } = options;
  const account = `bench-inbound-${randomUUID().slice(0, 8)}`;
  const domain = `${account}.test`;
  await registerDomain(domain, account);
  await setReceiving(domain, true);
  const latency = await measureLatency(host, account, domain, options.quick ? 10 : 40);
  const memory = await measureMemory(host, domain, options.bundleDir);
  const sorted = [...latency.samples].sort((a, b) => a - b);
  const pick = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const p95 = pick(0.95);
  const mb = (bytes: number) => bytes / 1024 / 1024;
  const ratio = (memory.peak - memory.idle) / memory.size;
  const postalRatio = memory.postalMime / memory.size;
  return [
    '### 8. Inbound mail',
    '',
    `Latency: ${latency.samples.length} messages of ${fmt(latency.bytes / 1024, 0)} KB (text, HTML and 2 attachments), sent one at a time over SMTP to the inbound mail server, after one that loads the inbound function (a cold start, not counted); from the end of DATA to the first attempt of the \`inbound.received\` webhook.`,
    '',
    '| p50 ms | p95 ms | max ms | target p95 ≤ 2,000 ms |',
    '|---:|---:|---:|---|',
    `| ${fmt(pick(0.5), 0)} | ${fmt(p95, 0)} | ${fmt(sorted[sorted.length - 1] ?? Number.NaN, 0)} | ${checkTarget('inbound-latency', `${fmt(p95, 0)} ms`, p95 <= 2000)} |`,
    '',
    `Memory: a ${fmt(mb(memory.size))} MB message (one ${fmt(mb(memory.attachment))} MB attachment, base64) stored under inbound/raw/ as SES stores it, parsed by the inbound function's bundle alone in a process.`,
    '',
    '| parser | idle RSS MB | peak RSS MB | peak − idle | ÷ message size | target ≤ 3 × |',
    '|---|---:|---:|---:|---:|---|',
    `| inbound function (mailparser, streamed from S3) | ${fmt(mb(memory.idle))} | ${fmt(mb(memory.peak))} | ${fmt(mb(memory.peak - memory.idle))} MB | ${fmt(ratio, 2)} | ${checkTarget('inbound-memory', `${fmt(ratio, 2)} ×`, ratio <= 3)} |`,
    `| postal-mime on the same object (for comparison) | | | ${fmt(mb(memory.postalMime))} MB | ${fmt(postalRatio, 2)} | ${verdict(postalRatio <= 3)} |`,
    '',
  ];
}

/** A raw SMTP exchange, so the clock starts exactly when the final `.` has been written. */
async function smtpSend(port: number, from: string, to: string, raw: Buffer): Promise<number> {
  const socket: Socket = connect(port, '127.0.0.1');
  let buffer = '';
  const waiting: Array<(line: string) => void> = [];
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (;;) {
      const end = buffer.indexOf('\r\n');
      if (end === -1) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      // Multi-line replies (250-…) end with the line whose 4th character is a space.
      if (line[3] === '-') continue;
      waiting.shift()?.(line);
    }
  });
  const reply = () => new Promise<string>((resolve) => waiting.push(resolve));
  const command = async (text: string, expect: string) => {
    const answer = reply();
    socket.write(`${text}\r\n`);
    const line = await answer;
    if (!line.startsWith(expect)) throw new Error(`SMTP ${text}: ${line}`);
  };
  const greeting = await reply();
  if (!greeting.startsWith('220')) throw new Error(`SMTP greeting: ${greeting}`);
  await command('EHLO bench.test', '250');
  await command(`MAIL FROM:<${from}>`, '250');
  await command(`RCPT TO:<${to}>`, '250');
  await command('DATA', '354');
  const accepted = reply();
  const stuffed = Buffer.from(raw.toString('latin1').replace(/\r\n\./g, '\r\n..'), 'latin1');
  const dataEnd = await new Promise<number>((resolve) =>
    socket.write(Buffer.concat([stuffed, Buffer.from('\r\n.\r\n')]), () => resolve(Date.now())),
  );
  const line = await accepted;
  if (!line.startsWith('250')) throw new Error(`SMTP DATA: ${line}`);
  socket.end('QUIT\r\n');
  return dataEnd;
}

async function compose(domain: string, messageId: string): Promise<Buffer> {
  const composer = new MailComposer({
    from: 'Bench Sender <bench@sender.test>',
    to: `support@${domain}`,
    subject: 'Inbound benchmark',
    messageId,
    text: 'Please find the two files attached.\n'.repeat(40),
    html: `<p>${'Please find the two files attached. '.repeat(40)}</p>`,
    attachments: [
      { filename: 'one.bin', content: randomBytes(34 * 1024) },
      { filename: 'two.bin', content: randomBytes(34 * 1024) },
    ],
  });
  return composer.compile().build();
}

async function measureLatency(host: BenchHost, account: string, domain: string, count: number) {
  const arrivals = new Map<string, number>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { message_id: string } };
      if (!arrivals.has(body.data.message_id)) arrivals.set(body.data.message_id, Date.now());
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const token = await host.mint(account);
  const added = await fetch(`${host.url}/webhook/add-1.0`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/inbound`,
      events: ['inbound.received'],
    }),
  });
  if (added.status !== 200) throw new Error(`webhook add: ${added.status} ${await added.text()}`);
  const port = Number(new URL(host.env.INBOUND_SMTP_URL as string).port);
  const sent = new Map<string, number>();
  let bytes = 0;
  progress(`8 inbound latency: ${count} messages (after one that loads the function, not counted)`);
  await smtpSend(
    port,
    'bench@sender.test',
    `support@${domain}`,
    await compose(domain, `<bench-warm-${randomUUID()}@sender.test>`),
  );
  for (let index = 0; index < count; index++) {
    const messageId = `<bench-${index}-${randomUUID()}@sender.test>`;
    const raw = await compose(domain, messageId);
    bytes = raw.length;
    sent.set(messageId, await smtpSend(port, 'bench@sender.test', `support@${domain}`, raw));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const deadline = Date.now() + 60_000;
  while (arrivals.size < sent.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  receiver.close();
  if (arrivals.size < sent.size)
    throw new Error(`only ${arrivals.size} of ${sent.size} inbound webhooks arrived`);
  return {
    bytes,
    samples: [...sent].map(([messageId, at]) => (arrivals.get(messageId) as number) - at),
  };
}

/** Peak RSS (bytes) of a process so far. */
async function rssOf(url: string): Promise<number> {
  return Number(await (await fetch(`${url}/__rss`)).text());
}

async function measureMemory(host: BenchHost, domain: string, bundleDir: string) {
  const sesMessageId = `bench${randomUUID().replace(/-/g, '')}`;
  const objectKey = `inbound/raw/${sesMessageId}`;
  const attachment = 18_500_000;
  const raw = await new MailComposer({
    from: 'big@sender.test',
    to: `big@${domain}`,
    subject: 'A large message',
    text: 'The file is attached.',
    attachments: [{ filename: 'large.bin', content: randomBytes(attachment) }],
  })
    .compile()
    .build();
  await new Upload({
    client: s3(),
    params: { Bucket: host.env.BUCKET_NAME, Key: objectKey, Body: raw },
  }).done();
  const receipt = {
    notificationType: 'Received',
    mail: { timestamp: new Date().toISOString(), source: 'big@sender.test', messageId: sesMessageId },
    receipt: {
      timestamp: new Date().toISOString(),
      recipients: [`big@${domain}`],
      spfVerdict: { status: 'GRAY' },
      dkimVerdict: { status: 'GRAY' },
      dmarcVerdict: { status: 'GRAY' },
      action: { type: 'S3', bucketName: host.env.BUCKET_NAME, objectKey },
    },
  };
  progress(
    `8 inbound memory: a ${(raw.length / 1024 / 1024).toFixed(1)} MB message through the inbound bundle`,
  );
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      join(import.meta.dirname, 'function-process.ts'),
      join(bundleDir, 'inbound', 'index.mjs'),
      'inbound',
    ],
    {
      env: {
        ...process.env,
        ...host.env,
        LOG_FILE: join(host.dataDir, 'bench-inbound.log'),
        NODE_OPTIONS: '',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('error', reject);
      child.stdout?.once('data', (chunk: Buffer) => {
        const { port } = JSON.parse(chunk.toString().split('\n')[0] as string) as { port: number };
        resolve(`http://127.0.0.1:${port}`);
      });
    });
    const idle = await rssOf(url);
    const answer = await fetch(`${url}/__invoke`, {
      method: 'POST',
      body: JSON.stringify({
        Records: [
          {
            messageId: randomUUID(),
            receiptHandle: randomUUID(),
            body: JSON.stringify(receipt),
            attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
            messageAttributes: {},
            md5OfBody: '',
            eventSource: 'aws:sqs',
            eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:bench-inbound',
            awsRegion: 'us-east-1',
          },
        ],
      }),
    });
    const result = (await answer.json()) as { batchItemFailures?: unknown[] };
    if (answer.status !== 200 || (result.batchItemFailures ?? []).length > 0) {
      throw new Error(`the inbound bundle failed on the large message: ${JSON.stringify(result)}`);
    }
    const peak = await rssOf(url);
    return { size: raw.length, attachment, idle, peak, postalMime: await postalMimeGrowth(host, objectKey) };
  } finally {
    child.kill();
  }
}

/** postal-mime parsing the same object from S3 (its stream input), in a fresh process: growth of peak RSS. */
async function postalMimeGrowth(host: BenchHost, objectKey: string): Promise<number> {
  const script = `
    import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
    import PostalMime from 'postal-mime';
    import { readFileSync } from 'node:fs';
    const client = new S3Client({ forcePathStyle: true });
    await client.send(new GetObjectCommand({ Bucket: process.env.BUCKET_NAME, Key: 'missing-warm-up' })).catch(() => {});
    // VmHWM, not resourceUsage().maxRSS: a child starts with its parent's high-water mark there.
    const peak = () => Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
    const idle = peak();
    const object = await client.send(new GetObjectCommand({ Bucket: process.env.BUCKET_NAME, Key: ${JSON.stringify(objectKey)} }));
    const email = await PostalMime.parse(object.Body.transformToWebStream());
    if (email.attachments.length !== 1) throw new Error('postal-mime lost the attachment');
    process.stdout.write(String(peak() - idle));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, ...host.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`postal-mime comparison exited with ${code}`);
  return Number(out);
}
