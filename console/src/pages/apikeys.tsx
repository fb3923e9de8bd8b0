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
import { fromLocalInput } from '../format.ts';
import type { ApiKeyList, ApiKeyView, IssuedApiKey } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';
import { RotateButton } from './apikeys-rotate.tsx';

/**
 * API keys (docs/apikeys.md): the account's keys with their last use, making one (a preset,
 * domains, an expiry; the secret shown once with a copy button), rotating and revoking.
 */
async function keyList(): Promise<ApiKeyList> {
  const data = await dataOf(api().POST('/apikey/query-1.0', { body: {} }));
  if (!('api_keys' in data)) throw new Error('The API answered one key where the list was asked for');
  return data;
}

const stateOf = (key: ApiKeyView): string => {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) return 'expired';
  return 'active';
};

export function ApiKeysPage() {
  const [list, reload] = useAsync(keyList, []);
  const [issued, setIssued] = useState<Issued>();
  const action = useAction();
  const rotate = (keyId: string, graceSeconds: number) =>
    action.run(async () => {
      const result = await dataOf(
        api().POST('/apikey/rotate-1.0', { body: { key_id: keyId, grace_seconds: graceSeconds } }),
      );
      // The answer does not say until when the old secret works: the grace counts from about now.
      setIssued({ key: result, oldUntil: new Date(Date.now() + graceSeconds * 1000).toISOString() });
      reload();
    });
  const revoke = (keyId: string) =>
    action.run(async () => {
      await dataOf(api().POST('/apikey/revoke-1.0', { body: { key_id: keyId } }));
      setIssued(undefined);
      reload();
    });
  return (
    <>
      <h1>API keys</h1>
      <p class="lead">
        Keys act for your account wherever a token does (<code>Authorization: Bearer svc_live_…</code>), with
        their own scopes and restrictions. A revoked key stops working within 30 seconds.
      </p>
      {issued === undefined ? null : <KeyNotice issued={issued} />}
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
      <AsyncView value={list} loading="Loading API keys" onRetry={reload}>
        {(value) =>
          value.api_keys.length === 0 ? (
            <Empty title="No API keys">
              <p>Make one below to send from an application, a CLI or over SMTP.</p>
            </Empty>
          ) : (
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Domains</th>
                  <th scope="col">State</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {value.api_keys.map((key) => (
                  <tr key={key.key_id}>
                    <td>{key.name}</td>
                    <td>
                      <code>
                        {key.prefix}_…{key.last4}
                      </code>
                    </td>
                    <td>{key.scopes.join(', ')}</td>
                    <td>
                      {key.domains.length === 0 ? <span class="muted">all</span> : key.domains.join(', ')}
                    </td>
                    <td>
                      <StatusBadge status={stateOf(key)} />
                    </td>
                    <td>
                      <Time value={key.last_used_at} />
                    </td>
                    <td>
                      <Time value={key.expires_at} />
                    </td>
                    <td>
                      {key.revoked_at !== null ? null : (
                        <span class="actions">
                          <RotateButton
                            name={key.name}
                            busy={action.busy}
                            onRotate={(graceSeconds) => void rotate(key.key_id, graceSeconds)}
                          />{' '}
                          <ConfirmButton
                            label="Revoke"
                            name={`Revoke ${key.name}`}
                            question="Revoke this key for good?"
                            busy={action.busy}
                            danger
                            onConfirm={() => void revoke(key.key_id)}
                          />
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </AsyncView>
      <AddKey
        onAdded={(key) => {
          setIssued({ key });
          reload();
        }}
      />
    </>
  );
}

/** A key just made, or just rotated (then `oldUntil`: when its old secret stops working). */
interface Issued {
  key: IssuedApiKey;
  oldUntil?: string;
}

function KeyNotice({ issued: { key: issued, oldUntil } }: { issued: Issued }) {
  const rotated = oldUntil !== undefined;
  return (
    <div class="notice" role="status">
      <p>
        <strong>
          {rotated ? `New secret for ${issued.api_key.name}` : `Key ${issued.api_key.name} made`}.
        </strong>{' '}
        Copy it now: this is the only time it is shown, and it cannot be recovered (rotate the key for a new
        one).
      </p>
      {oldUntil === undefined ? null : <OldSecretEnd until={oldUntil} />}
      <p>
        <code class="value secret">{issued.key}</code>{' '}
        <CopyButton text={issued.key} label="Copy the API key" />
      </p>
    </div>
  );
}

function OldSecretEnd({ until }: { until: string }) {
  if (Date.parse(until) <= Date.now())
    return <p class="old-secret">The old secret stops working within 30 seconds.</p>;
  return (
    <p class="old-secret">
      The old secret keeps working until <Time value={until} />, then stops (within 30 seconds).
    </p>
  );
}

function AddKey({ onAdded }: { onAdded: (key: IssuedApiKey) => void }) {
  const [name, setName] = useState('');
  const [preset, setPreset] = useState<'full_access' | 'sending_access'>('sending_access');
  const [domains, setDomains] = useState('');
  const [expires, setExpires] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const domainList = domains
        .split(/[\s,]+/)
        .map((domain) => domain.trim())
        .filter((domain) => domain !== '');
      const expiresAt = expires === '' ? undefined : fromLocalInput(expires);
      const result = await dataOf(
        api().POST('/apikey/add-1.0', {
          body: {
            name: name.trim(),
            preset,
            ...(domainList.length === 0 ? {} : { domains: domainList }),
            ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
          },
        }),
      );
      setName('');
      setDomains('');
      setExpires('');
      onAdded(result);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-key">
      <h2 id="add-key">Make a key</h2>
      <div class="row">
        <label>
          Name{' '}
          <input
            type="text"
            required
            maxLength={100}
            value={name}
            placeholder="Production app"
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
        <label>
          Access{' '}
          <select
            value={preset}
            onChange={(event) => setPreset(event.currentTarget.value as 'full_access' | 'sending_access')}
          >
            <option value="sending_access">Sending only (messages:send)</option>
            <option value="full_access">Full access (every scope you hold)</option>
          </select>
        </label>
      </div>
      <div class="row">
        <label>
          Domains (optional){' '}
          <input
            type="text"
            value={domains}
            placeholder="example.org, shop.example.org"
            onInput={(event) => setDomains(event.currentTarget.value)}
          />
        </label>
        <label>
          Expires (optional){' '}
          <input
            type="datetime-local"
            value={expires}
            onInput={(event) => setExpires(event.currentTarget.value)}
          />
        </label>
      </div>
      <button type="submit" class="primary" disabled={action.busy || name.trim() === ''}>
        Make key
      </button>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}
