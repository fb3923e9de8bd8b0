import { useState } from 'preact/hooks';
import { ApiError, api, dataOf } from '../api.ts';
import { AsyncView, ConfirmButton, DateRange, Empty, ErrorNotice, Time } from '../components.tsx';
import { parseCsv } from '../csv.ts';
import { fromLocalInput, plural, toLocalInput } from '../format.ts';
import { href, navigate, type Route } from '../router.ts';
import type { SuppressionEntry, SuppressionPage, SuppressionReason, SuppressionStream } from '../types.ts';
import { suppressionReasons, suppressionStreamLabels, suppressionStreams } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * Suppressions: the addresses the account never sends to. Look one up, list them by reason, stream
 * (every stream, or broadcast only: an unsubscribe) and date (a page at a time), add some by hand or from a CSV file, remove one.
 */
const pageSize = 50;
/** The add route takes at most this many addresses per call. */
const batchSize = 1000;

interface ListFilters {
  reason: SuppressionReason | undefined;
  stream: SuppressionStream | undefined;
  from: string | undefined;
  to: string | undefined;
}

function filtersOf(route: Route): ListFilters {
  const reason = route.query.get('reason');
  const stream = route.query.get('stream');
  return {
    stream: (suppressionStreams as readonly string[]).includes(stream ?? '')
      ? (stream as SuppressionStream)
      : undefined,
    reason: (suppressionReasons as readonly string[]).includes(reason ?? '')
      ? (reason as SuppressionReason)
      : undefined,
    from: route.query.get('from') ?? undefined,
    to: route.query.get('to') ?? undefined,
  };
}

async function suppressionPage(filters: ListFilters, cursor: string | undefined): Promise<SuppressionPage> {
  const data = await dataOf(
    api().POST('/suppression/query-1.0', {
      body: {
        filters: {
          limit: pageSize,
          ...(filters.reason === undefined ? {} : { reason: filters.reason }),
          ...(filters.stream === undefined ? {} : { stream: filters.stream }),
          ...(filters.from === undefined ? {} : { date_from: filters.from }),
          ...(filters.to === undefined ? {} : { date_to: filters.to }),
        },
        ...(cursor === undefined ? {} : { cursor }),
      },
    }),
  );
  if (!('suppressions' in data)) throw new Error('The API answered one entry where a page was asked for');
  return data;
}

export function SuppressionsPage({ route }: { route: Route }) {
  const filters = filtersOf(route);
  const cursor = route.query.get('cursor') ?? undefined;
  const key = route.query.toString();
  const [page, reload] = useAsync(() => suppressionPage(filters, cursor), [key]);
  return (
    <>
      <h1>Suppressions</h1>
      <p class="lead">
        Mail to these addresses is not sent: it ends as suppressed. Remove an address to send to it again.
      </p>
      <div class="columns">
        <Lookup />
        <AddAddresses onAdded={reload} />
      </div>
      <ImportCsv onImported={reload} />
      <h2>Your list</h2>
      <ListFilterForm key={key} filters={filters} />
      <AsyncView value={page} loading="Loading suppressions" onRetry={reload}>
        {(result) =>
          result.suppressions.length === 0 ? (
            <Empty
              title={
                filters.reason || filters.stream || filters.from || filters.to
                  ? 'No suppressions match these filters'
                  : 'Your suppression list is empty'
              }
            >
              <p>
                Addresses are added by hard bounces and complaints, by the unsubscribe links of broadcasts
                (broadcast only), and by you (above).
              </p>
            </Empty>
          ) : (
            <>
              <SuppressionTable entries={result.suppressions} onRemoved={reload} />
              <nav class="pager" aria-label="Pages">
                {cursor === undefined ? null : (
                  <a
                    href={href('suppressions', undefined, {
                      reason: filters.reason,
                      stream: filters.stream,
                      from: filters.from,
                      to: filters.to,
                    })}
                  >
                    First page
                  </a>
                )}
                {result.next_cursor === null ? (
                  <span class="muted">End of the list</span>
                ) : (
                  <a
                    href={href('suppressions', undefined, {
                      reason: filters.reason,
                      stream: filters.stream,
                      from: filters.from,
                      to: filters.to,
                      cursor: result.next_cursor,
                    })}
                  >
                    Next page
                  </a>
                )}
              </nav>
            </>
          )
        }
      </AsyncView>
    </>
  );
}

function Lookup() {
  const [email, setEmail] = useState('');
  const [result, setResult] = useState<{ email: string; entry: SuppressionEntry | null }>();
  const action = useAction();
  const search = (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    void action.run(async () => {
      const data = await dataOf(api().POST('/suppression/query-1.0', { body: { email: email.trim() } }));
      if (!('suppression' in data))
        throw new Error('The API answered a page where one address was asked for');
      setResult({ email: email.trim(), entry: data.suppression });
    });
  };
  return (
    <form class="panel" onSubmit={search} aria-labelledby="lookup-title">
      <h2 id="lookup-title">Search</h2>
      <label>
        Address{' '}
        <input type="email" value={email} required onInput={(event) => setEmail(event.currentTarget.value)} />
      </label>{' '}
      <button type="submit">Search</button>
      <div role="status">
        {result === undefined ? null : result.entry === null ? (
          <p>
            <strong>{result.email}</strong> is not suppressed: mail to it is sent.
          </p>
        ) : (
          <p>
            <strong>{result.entry.email}</strong> is suppressed ({result.entry.reason},{' '}
            {suppressionStreamLabels[result.entry.stream]}) since <Time value={result.entry.created_at} />
            {result.entry.detail ? `: ${result.entry.detail}` : ''}.
          </p>
        )}
      </div>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

function splitAddresses(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

interface AddOutcome {
  added: number;
  existing: number;
  invalid: string[];
}

/**
 * Adds addresses in batches the route accepts. An invalid address makes the API refuse its whole
 * batch (10000001, naming `emails[i]`): those are set aside and the rest of the batch is sent again.
 */
async function addAll(addresses: readonly string[], progress: (done: number) => void): Promise<AddOutcome> {
  const outcome: AddOutcome = { added: 0, existing: 0, invalid: [] };
  for (let start = 0; start < addresses.length; start += batchSize) {
    let batch = addresses.slice(start, start + batchSize);
    for (let attempt = 0; attempt < 2 && batch.length > 0; attempt += 1) {
      try {
        const result = await dataOf(api().POST('/suppression/add-1.0', { body: { emails: batch } }));
        outcome.added += result.added.length;
        outcome.existing += result.existing.length;
        batch = [];
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 10000001 || attempt > 0) throw error;
        const bad = new Set(
          error.details
            .map((detail) => /^emails\[(\d+)\]/.exec(detail.field ?? '')?.[1])
            .filter((index): index is string => index !== undefined)
            .map(Number),
        );
        if (bad.size === 0) throw error;
        outcome.invalid.push(...batch.filter((_, index) => bad.has(index)));
        batch = batch.filter((_, index) => !bad.has(index));
      }
    }
    progress(Math.min(start + batchSize, addresses.length));
  }
  return outcome;
}

function describeOutcome(outcome: AddOutcome): string {
  const parts = [`Added ${plural(outcome.added, 'address', 'addresses')}`];
  if (outcome.existing > 0) parts.push(`${outcome.existing} already listed`);
  if (outcome.invalid.length > 0)
    parts.push(
      `${outcome.invalid.length} not valid: ${outcome.invalid.slice(0, 5).join(', ')}${outcome.invalid.length > 5 ? ' …' : ''}`,
    );
  return `${parts.join('; ')}.`;
}

function AddAddresses({ onAdded }: { onAdded: () => void }) {
  const [text, setText] = useState('');
  const [status, setStatus] = useState<string>();
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    setStatus(undefined);
    void action.run(async () => {
      const outcome = await addAll(splitAddresses(text), () => undefined);
      setStatus(describeOutcome(outcome));
      setText('');
      onAdded();
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-title">
      <h2 id="add-title">Add</h2>
      <label for="add-addresses">Addresses (one per line, or separated by commas)</label>
      <textarea
        id="add-addresses"
        rows={3}
        required
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
      />
      <button type="submit" class="primary" disabled={action.busy}>
        Suppress
      </button>
      <p role="status">{status}</p>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

function ImportCsv({ onImported }: { onImported: () => void }) {
  const [status, setStatus] = useState<string>();
  const action = useAction();
  const importFile = (file: File) =>
    action.run(async () => {
      const rows = parseCsv(await file.text());
      // The first column holds the address; a first row without an @ is a header.
      const addresses = rows
        .map((row) => (row[0] ?? '').trim())
        .filter((value, index) => value !== '' && (index > 0 || value.includes('@')));
      if (addresses.length === 0) {
        setStatus(`${file.name} holds no addresses (the first column is read).`);
        return;
      }
      const outcome = await addAll(addresses, (done) =>
        setStatus(`Importing ${file.name}: ${done} of ${addresses.length} …`),
      );
      setStatus(`${file.name}: ${describeOutcome(outcome)}`);
      onImported();
    });
  return (
    <section class="panel" aria-labelledby="import-title">
      <h2 id="import-title">Import a CSV file</h2>
      <label>
        CSV file with one address per row in the first column{' '}
        <input
          type="file"
          accept=".csv,.txt,text/csv,text/plain"
          disabled={action.busy}
          onChange={(event) => {
            const file = event.currentTarget.files?.[0];
            if (file !== undefined) void importFile(file);
            event.currentTarget.value = '';
          }}
        />
      </label>
      <p role="status">{status}</p>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </section>
  );
}

function ListFilterForm({ filters }: { filters: ListFilters }) {
  const [reason, setReason] = useState(filters.reason ?? '');
  const [stream, setStream] = useState(filters.stream ?? '');
  const [from, setFrom] = useState(toLocalInput(filters.from));
  const [to, setTo] = useState(toLocalInput(filters.to));
  return (
    <form
      class="filters row"
      aria-label="Filter suppressions"
      onSubmit={(event) => {
        event.preventDefault();
        navigate(
          href('suppressions', undefined, {
            reason,
            stream,
            from: fromLocalInput(from),
            to: fromLocalInput(to),
          }),
        );
      }}
    >
      <label>
        Reason{' '}
        <select value={reason} onChange={(event) => setReason(event.currentTarget.value)}>
          <option value="">any</option>
          {suppressionReasons.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </label>
      <label>
        Stream{' '}
        <select value={stream} onChange={(event) => setStream(event.currentTarget.value)}>
          <option value="">any</option>
          {suppressionStreams.map((value) => (
            <option key={value} value={value}>
              {suppressionStreamLabels[value]}
            </option>
          ))}
        </select>
      </label>
      <DateRange from={from} to={to} onFrom={setFrom} onTo={setTo} />
      <button type="submit">Apply filters</button>
    </form>
  );
}

function SuppressionTable({
  entries,
  onRemoved,
}: {
  entries: readonly SuppressionEntry[];
  onRemoved: () => void;
}) {
  const action = useAction();
  const remove = (email: string) =>
    action.run(async () => {
      await dataOf(api().POST('/suppression/delete-1.0', { body: { emails: [email] } }));
      onRemoved();
    });
  return (
    <>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Address</th>
            <th scope="col">Reason</th>
            <th scope="col">Stream</th>
            <th scope="col">Detail</th>
            <th scope="col">Since</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.email}>
              <td>{entry.email}</td>
              <td>{entry.reason}</td>
              <td>{suppressionStreamLabels[entry.stream]}</td>
              <td class="detail">
                {entry.detail ?? ''}
                {entry.message_uuid === null ? null : (
                  <>
                    {' '}
                    <a href={href('message', entry.message_uuid)}>message</a>
                  </>
                )}
              </td>
              <td>
                <Time value={entry.created_at} />
              </td>
              <td>
                <ConfirmButton
                  label="Remove"
                  name={`Remove ${entry.email}`}
                  question={`Send to ${entry.email} again?`}
                  onConfirm={() => remove(entry.email)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
