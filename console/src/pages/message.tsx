import { useState } from 'preact/hooks';
import { api, dataOf } from '../api.ts';
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
import { href } from '../router.ts';
import type { MessageDetails } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * One message: who sent it to whom, each recipient's status with the receiving side's answer, the
 * status history, headers and attachments, and release or cancel while it is held.
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
      <AsyncView value={message} loading="Loading the message" onRetry={reload}>
        {(details) => <MessageView details={details} onChange={reload} />}
      </AsyncView>
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
              <td class="detail">{recipient.detail ?? <span class="muted">—</span>}</td>
              <td>
                <Time value={recipient.updated_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>

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
        <table class="list compact">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(details.headers).map(([name, value]) => (
              <tr key={name}>
                <td>
                  <code>{name}</code>
                </td>
                <td class="detail">{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Attachments</h2>
      {details.attachments.length === 0 ? (
        <Empty title="No attachments" />
      ) : (
        <ul>
          {details.attachments.map((attachment) => (
            <li key={attachment.filename}>
              {attachment.filename}{' '}
              <span class="muted">
                ({attachment.content_type}, {plural(attachment.size, 'byte')})
              </span>
            </li>
          ))}
        </ul>
      )}
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
