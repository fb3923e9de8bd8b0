import { verdict } from './stats.ts';

/**
 * Every target the benchmark checks, with what a miss means. The sections record their verdicts
 * here as they run, and docs/benchmarks.md opens with one table of them: the page is generated,
 * so what a reader needs to judge a miss lives beside the target, not in a history.
 */
const targets = {
  'cold-own-code': {
    statement: 'own code adds ≤ 10 % to the import time of its SDK-only baseline (ratio ≤ 1.1)',
    whenMissed:
      'The public functions compare a few milliseconds against Middy alone (their size targets protect them); the others carry zod schemas, the route, the catalogue and Powertools, built once per instance. Building them lazily only moves the cost into the first request.',
  },
  'health-size': { statement: 'health ≤ 20 KB', whenMissed: 'A handler must import only its own route.' },
  'keepalive-size': {
    statement: 'GET keepalive ≤ 20 KB',
    whenMissed: 'A handler must import only its own route.',
  },
  'api-start-size': {
    statement: 'largest API function ≤ 500 KB loaded at start',
    whenMissed: 'Look at the largest inputs per bundle for a library that could load on first use.',
  },
  'sender-start-size': {
    statement: 'sender ≤ 700 KB loaded at start',
    whenMissed: 'As above, for the sender.',
  },
  'sender-cold-import': {
    statement: 'sender cold import ≤ 1.4 × its SDK-only baseline',
    whenMissed:
      'Single rounds swing widely on a shared machine; a miss by a few hundredths under load is noise, a miss in a quiet `--only=cold` run is a regression. The sender is a queue worker: its cold start delays a batch, never an API answer.',
  },
  'warm-overhead': {
    statement: 'every endpoint ≤ 1.3 × the raw SDK calls it must make (warm, through the local host)',
    whenMissed:
      'The emulators answer in a few milliseconds, so a fixed cost (token check, validation, log line) is a large ratio here; the added milliseconds are what carries over to AWS, where each call takes 5–20 ms.',
  },
  'tracking-compose': {
    statement: 'composing a 50 KB HTML message with 100 links tracked ≤ 1.3 × composing it untracked',
    whenMissed:
      "Time the link scan, the tokens and the rewrite apart (a 50 KB part: about 0.5, 0.4 and 0.1 ms on a quiet machine): the scan is htmlparser2's tokenizer alone, the tokens one AES-GCM seal per copy and an HMAC per link, the rewrite one join. The rest of the gap is the longer part through MIME and the DKIM body hash. Figures swing by tenths in a quick run on a shared machine; compare several.",
  },
  'tracking-click': {
    statement: 'a click redirect ≤ 1.3 × GET /health, side by side',
    whenMissed:
      'The recording runs after the answer (one event-loop turn after the stream ends) and a repeated click reads nothing before its 302, so what is left is the streamed answer (the local stand-in of response streaming) against health answering from memory, on a host whose pollers share its one process; the first click of a message also reads the message and its HTML part (the target comes from the stored message, never the token). On AWS both pay API Gateway and Lambda, so the same milliseconds are a smaller ratio. Profile the host with --cpu-prof under the client of bench/side-by-side-client.ts.',
  },
  'tracking-open': {
    statement: 'an open ≤ 1.3 × GET /health, side by side',
    whenMissed:
      'The open reads and writes nothing before its GIF: what is left is the streamed answer, as for a repeated click.',
  },
  'large-add-linear': {
    statement:
      'the add of a 4.4 MB attachment takes time linear in its size (ms per MB at 4.4 MB ≤ 1.5 × at 1.1 MB)',
    whenMissed:
      'Something on the add path is worse than linear in the body: a backtracking regular expression, a copy per field, a string built by concatenation. Time the stages (JSON parse, schema, content store) with the 4.4 MB body.',
  },
  'template-add': {
    statement: 'add with a template ≤ 1.15 × add of the same rendered message',
    whenMissed: 'The template read and the render are on the accept path; look at the stage table.',
  },
  'template-render': {
    statement: 'preview render ≤ 1.3 × GET /health',
    whenMissed:
      'Handlebars alone takes more than the 30 % over health that the target allows for a 50 KB newsletter, before a byte is moved; on AWS both calls pay API Gateway and Lambda, and the same difference is a much smaller ratio.',
  },
  'template-linear': {
    statement:
      'preview of the largest allowed template (500 KB, 10,000 tags) ≤ 2.3 × the preview of half of it (parse, compile, budgets, render)',
    whenMissed:
      'A step of the preview grew faster than its input: time the pre-scan, the parse, Handlebars’ compile, the budget walk and the render one by one at both sizes.',
  },
  'query-scaling': {
    statement: 'a filtered query at 100,000 messages ≤ 1.2 × at 1,000',
    whenMissed:
      'The items evaluated vary between runs with the random seeding of lanes and dates (the same code has read 110–145 at 100,000 messages); a miss whose items ratio is near the latency ratio is that, a miss with equal items is latency noise, and a query that reads more than its page as the account grows shows a rising items count in every run.',
  },
  'delivery-rsa': {
    statement: 'delivery with rsa-sha256 ≥ 0.7 × raw nodemailer',
    whenMissed: 'The sender handles a batch concurrently; a miss means a step of the send became serial.',
  },
  'delivery-ed25519': {
    statement: 'delivery with ed25519-sha256 (dual-signed) ≥ 0.7 × raw nodemailer',
    whenMissed: 'As above; the RSA companion signature is the larger cost.',
  },
  'memory-peak': {
    statement: 'every function ≤ 128 MB peak RSS (one bundle per process, Node defaults)',
    whenMissed:
      'Under back-to-back requests every function plateaus near Node’s default heap, so the figure is an upper bound; the functions have 512 MB on Lambda (the sender 1,024 MB, for the CPU of RSA signing).',
  },
  'ceiling-service': { statement: 'service-wide ceiling ≥ 10,000 messages/s', whenMissed: 'Add shards.' },
  'ceiling-account': { statement: 'one account ≥ 1,000 messages/s', whenMissed: 'Add shards.' },
  'write-units': {
    statement: '≤ 8 write units per message, the statistics’ counters included',
    whenMissed: 'A write was added to the lifecycle: see the table of units by index.',
  },
  'cost-typical': {
    statement: 'AWS cost excluding SES ≤ $8 per million messages (typical profile)',
    whenMissed:
      'The REST API ($3.50 a million requests) and the DynamoDB writes come to about $7.9 before any Lambda, queue or log line; the stack keeps the REST API for AWS WAF and the catalogue’s gateway responses. The HTTP API total is reported beside it; the Lambda duration measured here is an upper bound.',
  },
  'cost-batch': {
    statement: 'batch profile: AWS cost excluding SES ≤ $6 per million',
    whenMissed: 'As above.',
  },
  'inbound-latency': {
    statement: 'inbound: received to stored p95 ≤ 2 s',
    whenMissed: 'The parser or the object reads became slower.',
  },
  'inbound-memory': {
    statement: 'inbound: memory above idle ≤ 3 × the message (streamed parse)',
    whenMissed: 'The message is being buffered whole somewhere.',
  },
  'broadcast-add': {
    statement: 'a broadcast add ≤ 1.1 × a transactional add (held, alternating rounds)',
    whenMissed:
      'A broadcast is validated like any add plus the List-Id check; a miss means work was added to acceptance that belongs to the send (the link is sealed by the sender).',
  },
  'unsubscribe-post': {
    statement: 'the one-click unsubscribe POST ≤ 1.2 × GET /health plus one conditional write',
    whenMissed:
      'The POST opens the token, makes one conditional put and reads the message for its note; look for a second write or a cold key derivation per request.',
  },
  'html-to-text-linear': {
    statement: 'HTML to text of a 400 KB wide-table newsletter is linear: time at 2× ≤ 2.3 × time at 1×',
    whenMissed:
      'Something in the conversion grows faster than its input again: look at the table layout (shared/platform/mail/text-table-layout.ts) and the depth scan first.',
  },
  'batch-time': {
    statement: 'a batch of 500 ≤ 0.5 × the time of 500 adds from 8 clients',
    whenMissed: 'The batch writes lost their parallelism.',
  },
  'batch-filter-scaling': {
    statement: 'a tag- or recipient-filtered page at 100,000 messages evaluates ≤ 1.2 × the items at 1,000',
    whenMissed: 'A filter that reads more than its page.',
  },
  'stats-query': {
    statement: 'a 30-day statistics query ≤ 1.2 × a query by uuid',
    whenMissed:
      'At the target’s edge on this host: nearly all of the difference is reading counter rows (DynamoDB Local and the SDK cost about 0.6 µs per number); on AWS a read of a 1 KB and of a 6 KB item cost the same few milliseconds. docs/decisions/0038-statistics-row-layout.md says what would move it.',
  },
  'stats-items': {
    statement: 'statistics items read do not grow with the messages',
    whenMissed: 'A query reads rows outside its range.',
  },
  'stats-turnover': {
    statement: 'nor with the table stream’s shard turnover, once settled',
    whenMissed: 'Settling of shard rows stopped.',
  },
  'console-size': {
    statement: 'all console JavaScript ≤ 150 KB gzipped',
    whenMissed: 'A page pulled a large library.',
  },
  'console-render': {
    statement: 'Activity’s first render ≤ 1.5 × its query',
    whenMissed: 'The page does work per row beyond drawing it.',
  },
  'apikey-warm': {
    statement: 'a query by uuid with an API key ≤ 1.1 × with a JWT (warm: both credentials cached)',
    whenMissed:
      'A warm key check is a map lookup and one SHA-256 of 43 bytes; a miss means the check began to read the table or log per request.',
  },
  'apikey-first': {
    statement: 'the first request of a key ≤ 1.2 × of a JWT (nothing of either cached on the instance)',
    whenMissed:
      'A key’s first request reads its item, which carries its account’s status (docs/decisions/0058-api-key-account-status.md), as a JWT’s reads the account’s status: one GetItem each, so a miss by hundredths is the emulator’s noise on a shared machine; a second read on the key path is a regression. On a new Lambda instance the JWT path also fetches the identity provider’s key set, which this comparison leaves out. The last_used_at write runs beside the request and must never be awaited before the answer.',
  },
  'apikey-usage-writes': {
    statement: 'a key adds no write per request: last_used_at at most once a minute per key',
    whenMissed: 'The per-instance memory of the last write, or the condition of the update, is broken.',
  },
  'domain-add': {
    statement:
      'POST /domain/add-1.0 ≤ 2 × POST /message/add-1.0, key generation included (the RSA-2048 key from the pool made ahead)',
    whenMissed:
      'Add should make two table round trips (its reads side by side, then one transaction with the pooled key’s take) and no decrypt or encrypt (decision 0061): look for a write or read added beside them, transactions cancelled because adds raced for the same pooled key, or an empty pool. A quick run (5 rounds) beside other work on the machine can miss alone: run it again before looking further.',
  },
  'domain-check-scaling': {
    statement: 'a background domain check at 10,000 domains reads ≤ 1.1 × the items at 100, same number due',
    whenMissed: 'The pass reads more than the due entries: look at the shards’ key condition.',
  },
  'smtp-throughput': {
    statement:
      'a 10 KB message over SMTP (8 clients, connection reused) ≤ 1.5 × the same message through POST /message/add-1.0 (8 clients)',
    whenMissed:
      'The SMTP side is the same API call plus the SMTP dialogue and the server’s header scan: look for per-message work that grew (a key check that is no longer cached, a copy of the message per step, a log line per command).',
  },
  'smtp-memory': {
    statement:
      'the submission server ≤ 256 MB RSS with 100 idle connections and with 8 messages of 4 MB in flight',
    whenMissed:
      'A message is held in more copies than the raw bytes, their base64 and the request body; stream the request body instead of building it whole.',
  },
} as const satisfies Record<string, { statement: string; whenMissed: string }>;

export type TargetId = keyof typeof targets;

interface Result {
  id: TargetId;
  figure: string;
  met: boolean;
}

const results: Result[] = [];

/** Records a verdict for the summary table and returns it for the section's own table. */
export function checkTarget(id: TargetId, figure: string, met: boolean): string {
  results.push({ id, figure, met });
  return verdict(met);
}

/** The table at the top of docs/benchmarks.md: one row per target checked in this run. */
export function targetsTable(): string[] {
  const missed = results.filter((result) => !result.met).length;
  const lines = [
    '## Targets',
    '',
    `${results.length - missed} of ${results.length} targets met in this run${missed === 0 ? '.' : `; ${missed} missed, each with what the miss means.`}`,
    '',
    '| target | figure | verdict | when missed |',
    '|---|---|---|---|',
  ];
  const order = Object.keys(targets);
  const sorted = [...results].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  for (const result of sorted) {
    const target = targets[result.id];
    lines.push(
      `| ${target.statement} | ${result.figure} | ${verdict(result.met)} | ${result.met ? '' : target.whenMissed} |`,
    );
  }
  lines.push(
    '',
    'Webhook delivery latency is measured alone (`npm run bench:webhooks`) and carries its own verdict in its section below.',
    '',
  );
  return lines;
}
