import { useLayoutEffect, useState } from 'preact/hooks';
import { api, dataOf } from '../api.ts';
import {
  AsyncView,
  ConfirmButton,
  DateRange,
  Empty,
  ErrorNotice,
  StatusBadge,
  Time,
} from '../components.tsx';
import { toCsv } from '../csv.ts';
import { download } from '../download.ts';
import { fromLocalInput, plural, toLocalInput } from '../format.ts';
import { actOnHeld, canCancel, canRelease, type HeldAction } from '../held.ts';
import { href, navigate, type Route } from '../router.ts';
import { SendingDomainHint } from '../sending-domain-hint.tsx';
import type { MessageFilters, MessagePage, MessageStatus, MessageSummary } from '../types.ts';
import { messageStatuses } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * Activity: the account's messages, newest first, searched by subject and filtered by status, date,
 * recipient, tag and metadata pair (the filters live in the address), a page at a time, the
 * filtered list as CSV, and held mail released or cancelled in bulk.
 */
const pageSize = 50;
/**
 * A subject search is checked on the messages the API walks through, so one answer may be short:
 * the page asks again, from the cursor, up to this many times to fill itself.
 */
const maxReadsPerPage = 8;
/** CSV export reads pages of the API's largest size, up to this many messages. */
const exportPageSize = 1000;
const exportLimit = 100_000;

interface Pair {
  name: string;
  value: string;
}

interface ActivityFilters {
  subject: string | undefined;
  status: MessageStatus[];
  from: string | undefined;
  to: string | undefined;
  recipient: string | undefined;
  /** A tag, `name:value` in the address (a tag name has no colon). */
  tag: Pair | undefined;
  /** A metadata pair, `key:value` in the address (a metadata key has no colon). */
  metadata: Pair | undefined;
}

/** `name:value` split at its first colon; anything without one (or with an empty name) is no filter. */
function pairOf(text: string | null): Pair | undefined {
  const at = text?.indexOf(':') ?? -1;
  if (text === null || at < 1) return undefined;
  return { name: text.slice(0, at), value: text.slice(at + 1) };
}

function pairText(pair: Pair | undefined): string | undefined {
  return pair === undefined ? undefined : `${pair.name}:${pair.value}`;
}

function isFiltered(filters: ActivityFilters): boolean {
  return (
    filters.subject !== undefined ||
    filters.status.length > 0 ||
    filters.from !== undefined ||
    filters.to !== undefined ||
    filters.recipient !== undefined ||
    filters.tag !== undefined ||
    filters.metadata !== undefined
  );
}

function filtersOf(route: Route): ActivityFilters {
  const status = (route.query.get('status') ?? '')
    .split(',')
    .filter((value): value is MessageStatus => (messageStatuses as readonly string[]).includes(value));
  return {
    subject: route.query.get('subject')?.trim() || undefined,
    status,
    from: route.query.get('from') ?? undefined,
    to: route.query.get('to') ?? undefined,
    recipient: route.query.get('recipient') || undefined,
    tag: pairOf(route.query.get('tag')),
    metadata: pairOf(route.query.get('metadata')),
  };
}

function apiFilters(filters: ActivityFilters, limit: number): MessageFilters {
  return {
    limit,
    ...(filters.subject === undefined ? {} : { subject: filters.subject }),
    ...(filters.status.length > 0 ? { status: filters.status } : {}),
    ...(filters.from === undefined ? {} : { date_from: filters.from }),
    ...(filters.to === undefined ? {} : { date_to: filters.to }),
    ...(filters.recipient === undefined ? {} : { recipient: filters.recipient }),
    ...(filters.tag === undefined ? {} : { tag: filters.tag }),
    ...(filters.metadata === undefined
      ? {}
      : { metadata: { [filters.metadata.name]: filters.metadata.value } }),
  };
}

function queryOf(filters: ActivityFilters, cursor?: string): Record<string, string | undefined> {
  return {
    subject: filters.subject,
    status: filters.status.join(','),
    from: filters.from,
    to: filters.to,
    recipient: filters.recipient,
    tag: pairText(filters.tag),
    metadata: pairText(filters.metadata),
    cursor,
  };
}

async function messagePage(filters: MessageFilters, cursor: string | undefined): Promise<MessagePage> {
  const data = await dataOf(
    api().POST('/message/query-1.0', { body: { filters, ...(cursor === undefined ? {} : { cursor }) } }),
  );
  if (!('messages' in data)) throw new Error('The API answered one message where a page was asked for');
  return data;
}

/** A page of up to `filters.limit` messages, asking again from the cursor while an answer comes back short. */
async function fullPage(filters: MessageFilters, cursor: string | undefined): Promise<MessagePage> {
  const limit = filters.limit ?? pageSize;
  const messages: MessageSummary[] = [];
  let next = cursor;
  for (let read = 0; read < maxReadsPerPage; read += 1) {
    const page = await messagePage({ ...filters, limit: limit - messages.length }, next);
    messages.push(...page.messages);
    next = page.next_cursor ?? undefined;
    if (next === undefined || messages.length >= limit) break;
  }
  return { messages, count: messages.length, next_cursor: next ?? null };
}

/**
 * Marks for the console benchmark (bench/console.ts): from the page's first render to its first
 * answer in the DOM, once per page load.
 */
let startMarked = false;
let firstRenderMarked = false;

export function ActivityPage({ route }: { route: Route }) {
  const filters = filtersOf(route);
  const cursor = route.query.get('cursor') ?? undefined;
  const key = `${route.query.toString()}`;
  if (!startMarked) {
    startMarked = true;
    performance.mark('activity:start');
  }
  const [page, reload] = useAsync(() => fullPage(apiFilters(filters, pageSize), cursor), [key]);
  useLayoutEffect(() => {
    if (page.state === 'loading' || firstRenderMarked) return;
    firstRenderMarked = true;
    performance.mark('activity:rendered');
  }, [page.state]);

  return (
    <>
      <h1>Activity</h1>
      <FilterForm key={key} filters={filters} />
      <div class="toolbar">
        <button type="button" onClick={reload}>
          Refresh
        </button>
        <ExportCsv key={key} filters={filters} />
      </div>
      <AsyncView value={page} loading="Loading messages" onRetry={reload}>
        {(result) =>
          result.messages.length === 0 && result.next_cursor === null ? (
            <NoMessages filtered={isFiltered(filters)} />
          ) : (
            <>
              {result.messages.length === 0 ? (
                <p class="muted">
                  Nothing matched among the messages read so far; older ones may still match.
                </p>
              ) : (
                <MessageList key={key} messages={result.messages} onChanged={reload} />
              )}
              <nav class="pager" aria-label="Pages">
                {cursor === undefined ? null : (
                  <a href={href('activity', undefined, queryOf(filters))}>First page</a>
                )}
                {result.next_cursor === null ? (
                  <span class="muted">End of the list</span>
                ) : (
                  <a href={href('activity', undefined, queryOf(filters, result.next_cursor))}>Next page</a>
                )}
              </nav>
            </>
          )
        }
      </AsyncView>
    </>
  );
}

/**
 * The filters in one bar above the table: the subject search first, then status, recipient and
 * dates; a tag or metadata pair under "More filters", open when one is set.
 */
function FilterForm({ filters }: { filters: ActivityFilters }) {
  const [subject, setSubject] = useState(filters.subject ?? '');
  const [status, setStatus] = useState(new Set(filters.status));
  const [from, setFrom] = useState(toLocalInput(filters.from));
  const [to, setTo] = useState(toLocalInput(filters.to));
  const [recipient, setRecipient] = useState(filters.recipient ?? '');
  const [tagName, setTagName] = useState(filters.tag?.name ?? '');
  const [tagValue, setTagValue] = useState(filters.tag?.value ?? '');
  const [metadataKey, setMetadataKey] = useState(filters.metadata?.name ?? '');
  const [metadataValue, setMetadataValue] = useState(filters.metadata?.value ?? '');
  const submit = (event: Event) => {
    event.preventDefault();
    navigate(
      href(
        'activity',
        undefined,
        queryOf({
          subject: subject.trim() || undefined,
          status: messageStatuses.filter((value) => status.has(value)),
          from: fromLocalInput(from),
          to: fromLocalInput(to),
          recipient: recipient.trim() || undefined,
          tag: tagName.trim() === '' ? undefined : { name: tagName.trim(), value: tagValue },
          metadata:
            metadataKey.trim() === '' ? undefined : { name: metadataKey.trim(), value: metadataValue },
        }),
      ),
    );
  };
  const toggle = (value: MessageStatus) => {
    const next = new Set(status);
    if (next.has(value)) next.delete(value);
    else next.add(value);
    setStatus(next);
  };
  return (
    <form class="filter-bar" onSubmit={submit} aria-label="Filter messages">
      <label class="search">
        <span class="visually-hidden">Search subject</span>
        <input
          type="search"
          value={subject}
          maxLength={200}
          placeholder="Search subject"
          onInput={(event) => setSubject(event.currentTarget.value)}
        />
      </label>
      <details class="menu">
        <summary>{status.size === 0 ? 'Any status' : `Status (${status.size})`}</summary>
        <fieldset>
          <legend class="visually-hidden">Status</legend>
          {messageStatuses.map((value) => (
            <label key={value}>
              <input type="checkbox" checked={status.has(value)} onChange={() => toggle(value)} /> {value}
            </label>
          ))}
        </fieldset>
      </details>
      <label>
        Recipient{' '}
        <input
          type="email"
          value={recipient}
          placeholder="joe@example.org"
          onInput={(event) => setRecipient(event.currentTarget.value)}
        />
      </label>
      <DateRange from={from} to={to} onFrom={setFrom} onTo={setTo} />
      <details class="menu more" open={filters.tag !== undefined || filters.metadata !== undefined}>
        <summary>More filters</summary>
        <div class="row">
          <label>
            Tag name <input value={tagName} onInput={(event) => setTagName(event.currentTarget.value)} />
          </label>
          <label>
            Tag value <input value={tagValue} onInput={(event) => setTagValue(event.currentTarget.value)} />
          </label>
          <label>
            Metadata key{' '}
            <input value={metadataKey} onInput={(event) => setMetadataKey(event.currentTarget.value)} />
          </label>
          <label>
            Metadata value{' '}
            <input value={metadataValue} onInput={(event) => setMetadataValue(event.currentTarget.value)} />
          </label>
        </div>
      </details>
      <button type="submit" class="primary">
        Apply filters
      </button>
      <a class="button" href={href('activity')}>
        Clear
      </a>
    </form>
  );
}

/**
 * The page of messages, and bulk release or cancel of the held ones among them: held and queued
 * rows have a checkbox; each selected message is released or cancelled in turn (the API has one
 * call per message), and the outcome is counted.
 */
function MessageList({
  messages,
  onChanged,
}: {
  messages: readonly MessageSummary[];
  onChanged: () => void;
}) {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [outcome, setOutcome] = useState<string>();
  const action = useAction();
  const chosen = messages.filter((message) => selected.has(message.message_uuid));
  const toRelease = chosen.filter((message) => canRelease(message.status));
  const toggle = (uuid: string) => {
    const next = new Set(selected);
    if (next.has(uuid)) next.delete(uuid);
    else next.add(uuid);
    setSelected(next);
  };
  const apply = (mode: HeldAction, targets: readonly MessageSummary[]) =>
    action.run(async () => {
      setOutcome(undefined);
      const failures: string[] = [];
      for (const message of targets) {
        try {
          await actOnHeld(message.message_uuid, mode);
        } catch (error) {
          failures.push(
            `${message.subject || message.message_uuid}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      const done = targets.length - failures.length;
      setOutcome(
        `${mode === 'manual-send' ? 'Released' : 'Cancelled'} ${plural(done, 'message')}${
          failures.length === 0 ? '.' : `; ${failures.length} could not be: ${failures.join('; ')}`
        }`,
      );
      setSelected(new Set());
      onChanged();
    });
  return (
    <>
      {chosen.length === 0 && outcome === undefined ? null : (
        <div class="toolbar bulk">
          <span>{plural(chosen.length, 'message')} selected</span>
          <button
            type="button"
            class="primary"
            disabled={action.busy || toRelease.length === 0}
            onClick={() => apply('manual-send', toRelease)}
          >
            Release {toRelease.length}
          </button>
          <ConfirmButton
            label={`Cancel ${chosen.length}`}
            question={`Cancel ${plural(chosen.length, 'message')} for good?`}
            busy={action.busy || chosen.length === 0}
            danger
            onConfirm={() => apply('manual-cancel', chosen)}
          />
          <span role="status">{outcome}</span>
        </div>
      )}
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
      <table class="list">
        <caption class="visually-hidden">Messages, newest first</caption>
        <thead>
          <tr>
            <th scope="col">
              <span class="visually-hidden">Select</span>
            </th>
            <th scope="col">Created</th>
            <th scope="col">Status</th>
            <th scope="col">Subject</th>
            <th scope="col">Sender</th>
            <th scope="col">Recipients</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((message) => (
            <tr key={message.message_uuid}>
              <td>
                {canCancel(message.status) ? (
                  <input
                    type="checkbox"
                    aria-label={`Select ${message.subject || message.message_uuid}`}
                    checked={selected.has(message.message_uuid)}
                    onChange={() => toggle(message.message_uuid)}
                  />
                ) : null}
              </td>
              <td>
                <Time value={message.created_at} />
              </td>
              <td>
                <StatusBadge status={message.status} />
              </td>
              <td>
                <a href={href('message', message.message_uuid)}>{message.subject || '(no subject)'}</a>
              </td>
              <td>{message.message_sender}</td>
              <td>
                {message.recipients.join(', ')}
                {message.recipients_count > message.recipients.length ? (
                  <span class="muted"> +{message.recipients_count - message.recipients.length}</span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function NoMessages({ filtered }: { filtered: boolean }) {
  if (filtered)
    return (
      <Empty title="No messages match these filters">
        <p>
          Widen the dates or the statuses, or <a href={href('activity')}>show every message</a>.
        </p>
      </Empty>
    );
  return (
    <Empty title="No messages yet">
      <p>
        Messages appear here as soon as the API accepts them: send one with <code>POST /message/add-1.0</code>
        .
      </p>
      <SendingDomainHint />
    </Empty>
  );
}

const csvHeader = [
  'message_uuid',
  'created_at',
  'updated_at',
  'status',
  'message_sender',
  'subject',
  'content_kind',
  'recipients_count',
  'scheduling_mode',
  'send_at',
];

function ExportCsv({ filters }: { filters: ActivityFilters }) {
  const [progress, setProgress] = useState<{ count: number; done: boolean } | undefined>();
  const action = useAction();
  const run = () =>
    action.run(async () => {
      const rows: Array<Array<string | number | undefined>> = [];
      setProgress({ count: 0, done: false });
      let cursor: string | undefined;
      do {
        const result = await messagePage(apiFilters(filters, exportPageSize), cursor);
        for (const message of result.messages) {
          rows.push([
            message.message_uuid,
            message.created_at,
            message.updated_at,
            message.status,
            message.message_sender,
            message.subject,
            message.content_kind,
            message.recipients_count,
            message.scheduling.mode,
            message.scheduling.send_at,
          ]);
        }
        setProgress({ count: rows.length, done: false });
        cursor = result.next_cursor ?? undefined;
      } while (cursor !== undefined && rows.length < exportLimit);
      download(
        `messages-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`,
        toCsv(csvHeader, rows),
      );
      setProgress({ count: rows.length, done: true });
    });
  return (
    <>
      <button type="button" onClick={run} disabled={action.busy}>
        Export CSV
      </button>
      <span role="status" class="muted">
        {action.busy
          ? `Reading … ${plural(progress?.count ?? 0, 'message')}`
          : progress?.done === true
            ? `Exported ${plural(progress.count, 'message')}${progress.count >= exportLimit ? ` (the first ${exportLimit})` : ''}`
            : 'Every message these filters match'}
      </span>
      {action.error === undefined ? null : <ErrorNotice error={action.error} onRetry={run} />}
    </>
  );
}
