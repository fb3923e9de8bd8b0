import { useState } from 'preact/hooks';
import { ApiError, api, dataOf } from '../api.ts';
import {
  AsyncView,
  ConfirmButton,
  CopyButton,
  Empty,
  ErrorNotice,
  StatusBadge,
  Time,
} from '../components.tsx';
import { plural } from '../format.ts';
import { actOnHeld, canCancel, canRelease, type HeldAction } from '../held.ts';
import { HtmlPreview } from '../preview.tsx';
import { href } from '../router.ts';
import type { MessageContent, MessageDetails, RecipientEvent } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * One message: its content as the recipients got it first (POST /message/content-1.0: the HTML in
 * the sandboxed preview, the text, every header and the raw download), each attachment once, then
 * who sent it to whom, each recipient's status with the receiving side's answers, its tags and
 * metadata, the status history and headers, and release or cancel while it is held. An unknown
 * message (112) is said in words, with the way back.
 */
async function messageDetails(uuid: string): Promise<MessageDetails> {
  const data = await dataOf(api().POST('/message/query-1.0', { body: { message_uuid: uuid } }));
  if ('messages' in data) throw new Error('The API answered a page where one message was asked for');
  return data;
}

export function MessagePage({ uuid }: { uuid: string }) {
  const [message, reload] = useAsync(() => messageDetails(uuid), [uuid]);
  return (
    <>
      <p class="breadcrumb">
        <a href={href('activity')}>Activity</a> / message
      </p>
      {message.state === 'error' && message.error instanceof ApiError && message.error.code === 112 ? (
        <div class="empty">
          <h1>No such message</h1>
          <p>
            This account has no message {uuid}: it may belong to another account, or the link is mistyped.
          </p>
          <p>
            <a href={href('activity')}>Back to Activity</a>
          </p>
        </div>
      ) : (
        <AsyncView value={message} loading="Loading the message" onRetry={reload}>
          {(details) => <MessageView details={details} onChange={reload} />}
        </AsyncView>
      )}
    </>
  );
}

function addresses(list: ReadonlyArray<{ email: string; name?: string }>): string {
  return list.length === 0
    ? '—'
    : list.map(({ email, name }) => (name ? `${name} <${email}>` : email)).join(', ');
}

function MessageView({ details, onChange }: { details: MessageDetails; onChange: () => void }) {
  return (
    <>
      <h1>
        {details.subject || '(no subject)'} <StatusBadge status={details.status} />
      </h1>
      <p class="muted">
        Message <code>{details.message_uuid}</code>{' '}
        <CopyButton text={details.message_uuid} label="Copy the message id" />
      </p>
      <HeldActions details={details} onChange={onChange} />
      <ContentSection uuid={details.message_uuid} attachments={details.attachments} />
      <h2>Details</h2>
      <dl class="facts">
        <dt>From</dt>
        <dd>{addresses(details.from)}</dd>
        <dt>Sender</dt>
        <dd>{details.message_sender}</dd>
        <dt>Reply-To</dt>
        <dd>{addresses(details.reply_to)}</dd>
        <dt>Created</dt>
        <dd>
          <Time value={details.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time value={details.updated_at} />
        </dd>
        <dt>Scheduling</dt>
        <dd>
          {details.scheduling.mode}
          {details.scheduling.send_at === undefined ? null : (
            <>
              {' at '}
              <Time value={details.scheduling.send_at} />
            </>
          )}
        </dd>
        <dt>Content</dt>
        <dd>{details.content_kind.replace('_', ' ')}</dd>
        <dt>Tags</dt>
        <dd>
          {details.tags.length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <ul class="tags" aria-label="Tags">
              {details.tags.map((tag) => (
                <li key={tag.name}>
                  <a href={href('activity', undefined, { tag: `${tag.name}:${tag.value}` })}>
                    <code>
                      {tag.name}: {tag.value}
                    </code>
                  </a>
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Metadata</dt>
        <dd>
          {Object.keys(details.metadata).length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <ul class="tags" aria-label="Metadata">
              {Object.entries(details.metadata).map(([key, value]) => (
                <li key={key}>
                  <code>
                    {key}: {value}
                  </code>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>

      <h2>Recipients</h2>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Recipient</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Receiving side</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {details.recipients.map((recipient) => (
            <tr key={`${recipient.kind}:${recipient.email}`}>
              <td>{recipient.name ? `${recipient.name} <${recipient.email}>` : recipient.email}</td>
              <td>{recipient.kind}</td>
              <td>
                <StatusBadge status={recipient.status} />
              </td>
              <td class="detail">
                {recipient.events.length > 0 ? (
                  <RecipientEvents events={recipient.events} />
                ) : (
                  (recipient.detail ?? <span class="muted">—</span>)
                )}
              </td>
              <td>
                <Time value={recipient.updated_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <TrackingTable details={details} />

      <h2>Status history</h2>
      <ol class="timeline">
        {details.status_history.map((entry) => (
          <li key={`${entry.at}:${entry.status}`}>
            <Time value={entry.at} /> <StatusBadge status={entry.status} />
            {entry.detail === undefined ? null : <span class="detail"> {entry.detail}</span>}
          </li>
        ))}
      </ol>

      <h2>Headers</h2>
      {Object.keys(details.headers).length === 0 ? (
        <p class="muted">No custom headers.</p>
      ) : (
        <HeaderTable headers={Object.entries(details.headers).map(([name, value]) => ({ name, value }))} />
      )}
    </>
  );
}

/**
 * Opens and clicks per recipient (docs/tracking.md), when the message asked for tracking or any
 * recipient has a hit (a domain default tracks without the message asking).
 */
function TrackingTable({ details }: { details: MessageDetails }) {
  const asked = details.tracking.opens === true || details.tracking.clicks === true;
  const tracked = details.recipients.some((recipient) => recipient.tracking !== undefined);
  if (!asked && !tracked) return null;
  return (
    <>
      <h2>Opens and clicks</h2>
      <table class="list" aria-label="Opens and clicks">
        <thead>
          <tr>
            <th scope="col">Recipient</th>
            <th scope="col" class="number">
              Opens
            </th>
            <th scope="col">Last open</th>
            <th scope="col">First human open</th>
            <th scope="col" class="number">
              Clicks
            </th>
            <th scope="col">Last click</th>
          </tr>
        </thead>
        <tbody>
          {details.recipients.map((recipient) => {
            const hits = recipient.tracking;
            return (
              <tr key={`${recipient.kind}:${recipient.email}`}>
                <td>{recipient.email}</td>
                <td class="number">{hits?.opens ?? 0}</td>
                <td>
                  {hits?.last_open === undefined ? (
                    <span class="muted">—</span>
                  ) : (
                    <>
                      <Time value={hits.last_open.at} />{' '}
                      {hits.last_open.machine_open ? (
                        <span
                          class="badge"
                          title="A mail provider's image proxy or privacy relay, not a person"
                        >
                          machine
                        </span>
                      ) : null}{' '}
                      <span class="muted">{hits.last_open.client_address ?? ''}</span>
                    </>
                  )}
                </td>
                <td>
                  {hits?.first_human_open_at === undefined ? (
                    <span class="muted">—</span>
                  ) : (
                    <Time value={hits.first_human_open_at} />
                  )}
                </td>
                <td class="number">{hits?.clicks ?? 0}</td>
                <td class="detail">
                  {hits?.last_click === undefined ? (
                    <span class="muted">—</span>
                  ) : (
                    <>
                      <Time value={hits.last_click.at} /> <code>{hits.last_click.link}</code>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

/** Header fields in order (a name may repeat in a message as sent). */
function HeaderTable({ headers }: { headers: ReadonlyArray<{ name: string; value: string }> }) {
  return (
    <table class="list compact">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {headers.map((header, index) => (
          <tr key={`${index}:${header.name}`}>
            <td>
              <code>{header.name}</code>
            </td>
            <td class="detail">{header.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the receiving side said about one recipient, event by event (SMTP reply, SES details), each answer once. */
function RecipientEvents({ events }: { events: readonly RecipientEvent[] }) {
  if (events.length === 0) return null;
  return (
    <ol class="events">
      {events.map((event, index) => (
        <li key={`${index}:${event.at}`}>
          <Time value={event.at} /> <StatusBadge status={event.status} />
          {[
            // The same answer for two steps (a final-hop relay's reply is sent and delivered at
            // once) is shown once, with the later step.
            event.response === events[index + 1]?.response ? undefined : event.response,
            event.bounce_type === undefined
              ? undefined
              : `${event.bounce_type}${event.bounce_subtype === undefined ? '' : ` / ${event.bounce_subtype}`}`,
            event.delay_type,
            event.complaint_type,
            event.diagnostic_code,
          ]
            .filter((part): part is string => part !== undefined && part !== '')
            .map((part) => (
              <span key={part} class="detail">
                {' '}
                {part}
              </span>
            ))}
        </li>
      ))}
    </ol>
  );
}

async function messageContent(uuid: string): Promise<MessageContent> {
  return dataOf(api().POST('/message/content-1.0', { body: { message_uuid: uuid } }));
}

/**
 * The message as the recipients got it (or would get it now, for one not sent yet): the HTML in
 * the sandboxed preview, the text, every header of the signed message, the attachments and the
 * whole message to download (links that expire). Bodies are personal data, under their own scope
 * (`messages:read_content`): a sign-in without it sees the API's 113 here and the rest of the page.
 */
type AttachmentFacts = MessageDetails['attachments'];

function ContentSection({ uuid, attachments }: { uuid: string; attachments: AttachmentFacts }) {
  const [content, reload] = useAsync(() => messageContent(uuid), [uuid]);
  return (
    <>
      <section aria-labelledby="content-heading">
        <h2 id="content-heading">Content</h2>
        <AsyncView value={content} loading="Loading the content" onRetry={reload}>
          {(parts) => <LoadedContent uuid={uuid} parts={parts} />}
        </AsyncView>
      </section>
      <h2>Attachments</h2>
      <AttachmentList
        attachments={attachments}
        downloads={content.state === 'ready' ? content.value : undefined}
      />
    </>
  );
}

/**
 * Each attachment once: a download link when the content could be read (its links expire), its
 * name and size otherwise (a sign-in without `messages:read_content`).
 */
function AttachmentList({
  attachments,
  downloads,
}: {
  attachments: AttachmentFacts;
  downloads: MessageContent | undefined;
}) {
  const listed = downloads?.attachments ?? attachments;
  if (listed.length === 0) return <Empty title="No attachments" />;
  return (
    <ul aria-label="Attachments">
      {listed.map((attachment, index) => (
        <li key={`${index}:${attachment.filename}`}>
          {'url' in attachment && typeof attachment.url === 'string' ? (
            <a href={attachment.url} download={attachment.filename}>
              {attachment.filename}
            </a>
          ) : (
            attachment.filename
          )}{' '}
          <span class="muted">
            ({attachment.content_type}, {plural(attachment.size, 'byte')})
          </span>
        </li>
      ))}
    </ul>
  );
}

function LoadedContent({ uuid, parts }: { uuid: string; parts: MessageContent }) {
  return (
    <>
      {parts.html === null ? (
        <p class="muted">No HTML part (or too large to show here: download the message).</p>
      ) : (
        <HtmlPreview html={parts.html} title="Message HTML" />
      )}
      <p class="toolbar">
        {parts.raw_url === null ? (
          <span class="muted">The signed message can no longer be made again (its DKIM key is gone).</span>
        ) : (
          <a class="button" href={parts.raw_url} download={`${uuid}.eml`}>
            Download the message (.eml)
          </a>
        )}{' '}
        <span class="muted">
          Links work until <Time value={parts.expires_at} />.
        </span>
      </p>
      <details open={parts.html === null}>
        <summary>Text part</summary>
        {parts.text === null ? (
          <p class="muted">No text part (or too large to show here: download the message).</p>
        ) : (
          <pre class="rendered-text">{parts.text}</pre>
        )}
      </details>
      <details>
        <summary>Every header as sent ({parts.headers.length})</summary>
        <HeaderTable headers={parts.headers} />
      </details>
    </>
  );
}

/** Release (manual-send) or cancel (manual-cancel) a held message, through POST /message/add-1.0. */
function HeldActions({ details, onChange }: { details: MessageDetails; onChange: () => void }) {
  const action = useAction();
  const [outcome, setOutcome] = useState<string>();
  if (!canRelease(details.status) && !canCancel(details.status))
    return outcome === undefined ? null : <p role="status">{outcome}</p>;
  const act = (mode: HeldAction) =>
    action.run(async () => {
      const status = await actOnHeld(details.message_uuid, mode);
      setOutcome(
        mode === 'manual-send' ? `Released: the message is ${status}.` : 'Cancelled: it will never be sent.',
      );
      onChange();
    });
  return (
    <section class="held" aria-label="Held message">
      <p>
        {details.status === 'queued'
          ? 'This message waits for a sender: it can still be cancelled.'
          : details.status === 'scheduled'
            ? 'This message is scheduled: send it now or cancel it.'
            : 'This message is held until you release or cancel it.'}
      </p>
      {canRelease(details.status) ? (
        <button type="button" class="primary" disabled={action.busy} onClick={() => act('manual-send')}>
          Release now
        </button>
      ) : null}{' '}
      <ConfirmButton
        label="Cancel message"
        question="Cancel this message for good?"
        busy={action.busy}
        danger
        onConfirm={() => act('manual-cancel')}
      />
      {outcome === undefined ? null : <p role="status">{outcome}</p>}
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </section>
  );
}
