import { useState } from 'preact/hooks';
import { api, dataOf } from '../api.ts';
import { ErrorNotice } from '../components.tsx';
import type { WebhookDetail, WebhookEventType } from '../types.ts';
import { webhookEventTypes } from '../types.ts';
import { useAction } from '../use-async.ts';

/**
 * The actions on one endpoint that take input: a test event of a chosen type (POST
 * /webhook/test-1.0, delivered and listed like any event) and a change of its URL and events (POST
 * /webhook/update-1.0, the secret stays).
 */
export function SendTestEvent({
  webhookId,
  onQueued,
}: {
  webhookId: string;
  onQueued: (note: string) => void;
}) {
  const [type, setType] = useState<WebhookEventType>('message.delivered');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const result = await dataOf(api().POST('/webhook/test-1.0', { body: { webhook_id: webhookId, type } }));
      onQueued(`A test ${result.type} event (${result.event_id}) is queued: its attempt appears below.`);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="test-event">
      <h2 id="test-event">Send a test event</h2>
      <p class="muted">
        A signed sample event, about no real message, sent to this endpoint alone and retried like any other.
      </p>
      <div class="row">
        <label>
          Event type{' '}
          <select value={type} onChange={(event) => setType(event.currentTarget.value as WebhookEventType)}>
            {webhookEventTypes.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="primary" disabled={action.busy}>
          Send a test event
        </button>
      </div>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

export function EditEndpoint({ webhook, onSaved }: { webhook: WebhookDetail; onSaved: () => void }) {
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState<Set<WebhookEventType>>(new Set(webhook.events));
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await dataOf(
        api().POST('/webhook/update-1.0', {
          body: {
            webhook_id: webhook.webhook_id,
            url: url.trim(),
            events: webhookEventTypes.filter((type) => events.has(type)),
          },
        }),
      );
      onSaved();
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="edit-endpoint">
      <h2 id="edit-endpoint">Change the endpoint</h2>
      <p class="muted">The signing secret stays the same.</p>
      <label>
        Endpoint URL{' '}
        <input type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
      </label>
      <EventChoice legend="Events it receives" events={events} onChange={setEvents} />
      <button type="submit" disabled={action.busy || events.size === 0}>
        Save changes
      </button>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

/** The event types an endpoint receives, one checkbox each (adding and editing an endpoint). */
export function EventChoice({
  legend,
  events,
  onChange,
}: {
  legend: string;
  events: ReadonlySet<WebhookEventType>;
  onChange: (events: Set<WebhookEventType>) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div class="checks">
        {webhookEventTypes.map((type) => (
          <label key={type}>
            <input
              type="checkbox"
              checked={events.has(type)}
              onChange={() => {
                const next = new Set(events);
                if (next.has(type)) next.delete(type);
                else next.add(type);
                onChange(next);
              }}
            />{' '}
            {type}
          </label>
        ))}
      </div>
    </fieldset>
  );
}
