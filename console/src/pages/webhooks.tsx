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
import { href, navigate } from '../router.ts';
import type {
  DeliveryAttempt,
  WebhookDetail,
  WebhookEventType,
  WebhookList,
  WebhookWithSecret,
} from '../types.ts';
import { webhookEventTypes } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';
import { EditEndpoint, EventChoice, SendTestEvent } from './webhook-actions.tsx';

/**
 * Webhooks: the account's endpoints, adding one (its signing secret is shown once), and for each
 * endpoint its latest delivery attempts with their status codes, a test event, a change of URL and
 * events, replay of an event, secret rotation and removal.
 */
async function webhookList(): Promise<WebhookList> {
  const data = await dataOf(api().POST('/webhook/query-1.0', { body: {} }));
  if (!('webhooks' in data)) throw new Error('The API answered one endpoint where the list was asked for');
  return data;
}

async function webhookDetail(id: string): Promise<WebhookDetail> {
  const data = await dataOf(api().POST('/webhook/query-1.0', { body: { webhook_id: id } }));
  if (!('webhook' in data)) throw new Error('The API answered the list where one endpoint was asked for');
  return data.webhook;
}

export function WebhooksPage({ id }: { id: string | undefined }) {
  return id === undefined ? <WebhookListView /> : <WebhookDetailView id={id} />;
}

function WebhookListView() {
  const [list, reload] = useAsync(webhookList, []);
  const [created, setCreated] = useState<WebhookWithSecret>();
  return (
    <>
      <h1>Webhooks</h1>
      <p class="lead">
        Endpoints receive message events (Standard Webhooks: signed with the endpoint's secret, retried with
        back-off).
      </p>
      {created === undefined ? null : <SecretNotice webhook={created} title="Endpoint added" />}
      <AsyncView value={list} loading="Loading endpoints" onRetry={reload}>
        {(value) =>
          value.webhooks.length === 0 ? (
            <Empty title="No webhook endpoints">
              <p>Add one below to receive delivery, bounce and complaint events as they happen.</p>
            </Empty>
          ) : (
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Added</th>
                </tr>
              </thead>
              <tbody>
                {value.webhooks.map((webhook) => (
                  <tr key={webhook.webhook_id}>
                    <td>
                      <a href={href('webhooks', webhook.webhook_id)}>{webhook.url}</a>
                      {webhook.description === null ? null : <div class="muted">{webhook.description}</div>}
                    </td>
                    <td>
                      {webhook.events.length === webhookEventTypes.length ? 'all' : webhook.events.join(', ')}
                    </td>
                    <td>
                      <StatusBadge status={webhook.enabled ? 'active' : 'disabled'} />
                    </td>
                    <td>
                      <Time value={webhook.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </AsyncView>
      <AddEndpoint
        onAdded={(webhook) => {
          setCreated(webhook);
          reload();
        }}
      />
    </>
  );
}

function SecretNotice({
  webhook,
  title,
  rotated,
}: {
  webhook: WebhookWithSecret;
  title: string;
  rotated?: boolean;
}) {
  return (
    <div class="notice" role="status">
      <p>
        <strong>{title}.</strong> Its signing secret is shown only now: store it where your receiver verifies
        signatures.
        {rotated
          ? ' For 24 hours every event is signed with the old and the new secret, so receivers can switch.'
          : ''}
      </p>
      <p>
        <code class="value secret">{webhook.secret}</code>{' '}
        <CopyButton text={webhook.secret} label="Copy the signing secret" />
      </p>
    </div>
  );
}

function AddEndpoint({ onAdded }: { onAdded: (webhook: WebhookWithSecret) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<WebhookEventType>>(new Set(webhookEventTypes));
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const chosen = webhookEventTypes.filter((type) => events.has(type));
      const result = await dataOf(
        api().POST('/webhook/add-1.0', {
          body: {
            url: url.trim(),
            ...(chosen.length === webhookEventTypes.length ? {} : { events: chosen }),
            ...(description.trim() === '' ? {} : { description: description.trim() }),
          },
        }),
      );
      setUrl('');
      setDescription('');
      setEvents(new Set(webhookEventTypes));
      onAdded(result.webhook);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-endpoint">
      <h2 id="add-endpoint">Add an endpoint</h2>
      <div class="row">
        <label>
          URL{' '}
          <input
            type="url"
            required
            value={url}
            placeholder="https://hooks.example.com/svc-mail"
            onInput={(event) => setUrl(event.currentTarget.value)}
          />
        </label>
        <label>
          Description{' '}
          <input
            type="text"
            value={description}
            onInput={(event) => setDescription(event.currentTarget.value)}
          />
        </label>
      </div>
      <EventChoice legend="Events" events={events} onChange={setEvents} />
      <button type="submit" class="primary" disabled={action.busy || events.size === 0}>
        Add endpoint
      </button>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

function WebhookDetailView({ id }: { id: string }) {
  const [detail, reload] = useAsync(() => webhookDetail(id), [id]);
  const [rotated, setRotated] = useState<WebhookWithSecret>();
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const act = (work: () => Promise<void>) =>
    action.run(async () => {
      setNotice(undefined);
      await work();
    });
  const rotate = () =>
    act(async () => {
      const result = await dataOf(api().POST('/webhook/rotate-secret-1.0', { body: { webhook_id: id } }));
      setRotated(result.webhook);
    });
  const remove = () =>
    act(async () => {
      await dataOf(api().POST('/webhook/delete-1.0', { body: { webhook_id: id } }));
      navigate(href('webhooks'));
    });
  const replay = (attempt: DeliveryAttempt) =>
    act(async () => {
      await dataOf(
        api().POST('/webhook/replay-1.0', { body: { webhook_id: id, event_id: attempt.event_id } }),
      );
      setNotice(`Event ${attempt.event_id} is queued for delivery again.`);
      setTimeout(reload, 1500);
    });
  return (
    <>
      <p class="breadcrumb">
        <a href={href('webhooks')}>Webhooks</a> / endpoint
      </p>
      <AsyncView value={detail} loading="Loading the endpoint" onRetry={reload}>
        {(webhook) => (
          <>
            <h1>{webhook.url}</h1>
            <dl class="facts">
              <dt>Id</dt>
              <dd>
                <code>{webhook.webhook_id}</code>
              </dd>
              <dt>State</dt>
              <dd>
                <StatusBadge status={webhook.enabled ? 'active' : 'disabled'} />
                {webhook.enabled ? '' : ' (the receiver answered 410 Gone: delete it and add it again)'}
              </dd>
              <dt>Events</dt>
              <dd>{webhook.events.join(', ')}</dd>
              <dt>Description</dt>
              <dd>{webhook.description ?? '—'}</dd>
              <dt>Added</dt>
              <dd>
                <Time value={webhook.created_at} />
              </dd>
            </dl>
            <div class="toolbar">
              <ConfirmButton
                label="Rotate secret"
                question="Make a new signing secret now? The old one keeps verifying for 24 hours."
                onConfirm={rotate}
              />
              <ConfirmButton
                label="Delete endpoint"
                question="Delete this endpoint? It receives nothing more."
                danger
                onConfirm={remove}
              />
              <button type="button" onClick={reload}>
                Refresh attempts
              </button>
            </div>
            {rotated === undefined ? null : <SecretNotice webhook={rotated} title="Secret rotated" rotated />}
            {notice === undefined ? null : (
              <p class="notice" role="status">
                {notice}
              </p>
            )}
            {action.error === undefined ? null : <ErrorNotice error={action.error} />}
            {webhook.enabled ? (
              <SendTestEvent
                webhookId={webhook.webhook_id}
                onQueued={(note) => {
                  setNotice(note);
                  setTimeout(reload, 1500);
                }}
              />
            ) : null}
            <h2>Delivery attempts</h2>
            {webhook.deliveries.length === 0 ? (
              <Empty title="No delivery attempts yet">
                <p>Attempts appear here as events of your messages are delivered to this endpoint.</p>
              </Empty>
            ) : (
              <table class="list">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Event</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">Answer</th>
                    <th scope="col">Next attempt</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {webhook.deliveries.map((attempt) => (
                    <tr key={`${attempt.event_id}:${attempt.attempt}:${attempt.at}`}>
                      <td>
                        <Time value={attempt.at} />
                      </td>
                      <td>
                        {attempt.type}
                        <div class="muted">
                          <code>{attempt.event_id}</code>
                        </div>
                      </td>
                      <td class="number">{attempt.attempt}</td>
                      <td>
                        <StatusBadge status={attempt.error === null ? 'delivered' : 'failed'} />{' '}
                        {attempt.status_code === null ? 'no answer' : `HTTP ${attempt.status_code}`}
                        {attempt.error === null ? null : <div class="detail">{attempt.error}</div>}
                      </td>
                      <td>
                        <Time value={attempt.next_attempt_at} />
                      </td>
                      <td>
                        <button
                          type="button"
                          class="small"
                          onClick={() => replay(attempt)}
                          aria-label={`Replay event ${attempt.event_id}`}
                        >
                          Replay
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <EditEndpoint
              key={`${webhook.url} ${webhook.events.join()}`}
              webhook={webhook}
              onSaved={() => {
                setNotice('Endpoint changed; its secret stays the same.');
                reload();
              }}
            />
          </>
        )}
      </AsyncView>
    </>
  );
}
