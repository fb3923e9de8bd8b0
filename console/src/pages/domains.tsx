import { useState } from 'preact/hooks';
import { ApiError, api, dataOf } from '../api.ts';
import { AsyncView, CopyButton, Empty, ErrorNotice, StatusBadge, Time } from '../components.tsx';
import { DomainRecords } from '../domain-records.tsx';
import { href, navigate } from '../router.ts';
import type { DkimAlgorithm, DkimKey, DkimStatus, DomainView as DomainViewData } from '../types.ts';
import { dkimAlgorithms } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * Domains: the account's domains with their status, "Add domain", and for one domain every record
 * to publish (domain-records.tsx), its DKIM keys (with copy buttons, in the one-string and the
 * chunked form DNS providers ask for) and an algorithm change (a key rotation) that is previewed
 * with a dry run before it is applied. Names looked up are also remembered in this browser.
 */
const rememberedKey = 'svc-mail-console:domains';

function rememberedDomains(): string[] {
  try {
    const value = JSON.parse(localStorage.getItem(rememberedKey) ?? '[]') as unknown;
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

function remember(domain: string): void {
  const list = [domain, ...rememberedDomains().filter((item) => item !== domain)].slice(0, 20);
  localStorage.setItem(rememberedKey, JSON.stringify(list));
}

const dnsStatusHelp: Record<string, string> = {
  verified: 'Every active key is published: receivers can verify the signatures.',
  pending: 'A record is not published yet: add the TXT records below at your DNS provider.',
  mismatch: 'DNS holds another value than the key: replace the TXT record with the one below.',
  unreachable: 'The DNS lookup failed: try again later.',
};

async function domainList() {
  return dataOf(api().POST('/domain/query-1.0', { body: { limit: 100 } }));
}

function DomainList({ current }: { current: string | undefined }) {
  // Read again when the shown domain changes: an added domain joins the list.
  const [list, reloadList] = useAsync(domainList, [current]);
  const [name, setName] = useState('');
  const action = useAction();
  const add = () =>
    action.run(async () => {
      const result = await dataOf(api().POST('/domain/add-1.0', { body: { domain: name.trim() } }));
      navigate(href('domains', undefined, { domain: result.domain.domain }));
    });
  return (
    <section class="panel" aria-labelledby="your-domains">
      <h2 id="your-domains">Your domains</h2>
      <AsyncView value={list} loading="Loading your domains" onRetry={reloadList}>
        {(value) =>
          'domains' in value && value.domains.length > 0 ? (
            <table class="list compact">
              <thead>
                <tr>
                  <th scope="col">Domain</th>
                  <th scope="col">Status</th>
                  <th scope="col">Sending</th>
                  <th scope="col">Checked</th>
                </tr>
              </thead>
              <tbody>
                {value.domains.map((entry) => (
                  <tr key={entry.domain}>
                    <td>
                      <a href={href('domains', undefined, { domain: entry.domain })}>{entry.domain}</a>
                    </td>
                    <td>
                      <StatusBadge status={entry.status} />
                    </td>
                    <td>{entry.sending_ready ? 'ready' : 'not yet'}</td>
                    <td>
                      <Time value={entry.checked_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p>No domains yet: add the domain you send from.</p>
          )
        }
      </AsyncView>
      <form
        class="row"
        aria-label="Add a domain"
        onSubmit={(event) => {
          event.preventDefault();
          add();
        }}
      >
        <label>
          New domain{' '}
          <input
            type="text"
            name="new-domain"
            value={name}
            placeholder="shop.example.com"
            required
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>
          Add domain
        </button>
      </form>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </section>
  );
}

async function dkimStatus(domain: string): Promise<DkimStatus> {
  return dataOf(api().GET('/domain/dkim/status-1.0', { params: { query: { domain } } }));
}

export function DomainsPage({ domain }: { domain: string | undefined }) {
  const [input, setInput] = useState(domain ?? rememberedDomains()[0] ?? '');
  const known = rememberedDomains();
  return (
    <>
      <h1>Domains</h1>
      <DomainList current={domain} />
      <form
        class="filters row"
        aria-label="Look up a domain"
        onSubmit={(event) => {
          event.preventDefault();
          const name = input.trim().toLowerCase();
          if (name !== '') navigate(href('domains', undefined, { domain: name }));
        }}
      >
        <label>
          Domain{' '}
          <input
            type="text"
            name="domain"
            list="known-domains"
            value={input}
            placeholder="example.com"
            required
            onInput={(event) => setInput(event.currentTarget.value)}
          />
        </label>
        <datalist id="known-domains">
          {known.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <button type="submit" class="primary">
          Show DKIM
        </button>
      </form>
      {domain === undefined ? (
        <Empty title="Choose a sending domain">
          <p>
            Enter a domain registered to your account to see its DKIM records and their DNS status.
            {known.length > 0 ? ' Domains you looked up before are suggested as you type.' : ''}
          </p>
        </Empty>
      ) : (
        <DomainView key={domain} domain={domain} />
      )}
    </>
  );
}

function DomainView({ domain }: { domain: string }) {
  const [records, setRecords] = useState<DomainViewData>();
  const [view] = useAsync(async () => {
    const result = await dataOf(api().POST('/domain/query-1.0', { body: { domain } }));
    return 'domain' in result ? result.domain : undefined;
  }, [domain]);
  const [status, reload] = useAsync(async () => {
    const result = await dkimStatus(domain);
    remember(domain);
    return result;
  }, [domain]);
  const shown = records ?? (view.state === 'ready' ? view.value : undefined);
  const panel =
    shown === undefined ? null : (
      <DomainRecords
        view={shown}
        onChange={(next) => {
          setRecords(next);
          reload();
        }}
      />
    );
  if (shown?.claim === true)
    return (
      <>
        <h2>{domain}</h2>
        {panel}
      </>
    );
  if (status.state === 'error' && status.error instanceof ApiError && status.error.code === 112)
    return (
      <Empty title={`${domain} is not one of your domains`}>
        <p>
          Check the spelling, or ask the operator to register it for your account (
          <code>npm run admin -- domains add</code>).
        </p>
      </Empty>
    );
  return (
    <AsyncView value={status} loading={`Loading ${domain}`} onRetry={reload}>
      {(value) => (
        <>
          <h2>{domain}</h2>
          {panel}
          {value.svc_config === null ? (
            <p>No active DKIM key: mail from this domain is not signed.</p>
          ) : (
            <dl class="facts">
              <dt>DKIM</dt>
              <dd>{value.svc_config.dkim_enabled ? 'enabled' : 'disabled'}</dd>
              <dt>Algorithm</dt>
              <dd>{value.svc_config.dkim_algorithm}</dd>
              <dt>Selector</dt>
              <dd>
                <code>{value.svc_config.dkim_selector}</code>
              </dd>
              <dt>DNS</dt>
              <dd>
                <StatusBadge status={value.svc_config.dkim_dns_status} />{' '}
                {dnsStatusHelp[value.svc_config.dkim_dns_status]}
              </dd>
            </dl>
          )}
          <h2>DNS records</h2>
          {value.dkim_keys.length === 0 ? (
            <Empty title="No keys" />
          ) : (
            value.dkim_keys.map((key) => <KeyRecord key={key.selector} record={key} />)
          )}
          <AlgorithmChange domain={domain} current={value.svc_config?.dkim_algorithm} onChanged={reload} />
        </>
      )}
    </AsyncView>
  );
}

function KeyRecord({ record }: { record: DkimKey }) {
  const chunked = record.dns_value_chunks.map((chunk) => `"${chunk}"`).join(' ');
  return (
    <section class={`record ${record.status}`} aria-label={`Key ${record.selector}`}>
      <h3>
        <code>{record.selector}</code> <StatusBadge status={record.status} />{' '}
        <span class="muted">{record.algorithm}</span>
      </h3>
      <p class="muted">
        Created <Time value={record.created_at} />
        {record.retired_at === undefined ? null : (
          <>
            {', retired '}
            <Time value={record.retired_at} />
            {': keep its record a few days for mail in transit, then remove it.'}
          </>
        )}
      </p>
      <table class="list compact record-table">
        <tbody>
          <tr>
            <th scope="row">Name</th>
            <td>
              <code class="value">{record.dns_name}</code>
            </td>
            <td>
              <CopyButton text={record.dns_name} label={`Copy the record name of ${record.selector}`} />
            </td>
          </tr>
          <tr>
            <th scope="row">Type</th>
            <td>
              <code>{record.dns_type}</code>
            </td>
            <td />
          </tr>
          <tr>
            <th scope="row">Value</th>
            <td>
              <code class="value">{record.dns_value}</code>
            </td>
            <td>
              <CopyButton text={record.dns_value} label={`Copy the record value of ${record.selector}`} />
            </td>
          </tr>
          {record.dns_value_chunks.length > 1 ? (
            <tr>
              <th scope="row">As strings</th>
              <td>
                <code class="value">{chunked}</code>
              </td>
              <td>
                <CopyButton
                  text={chunked}
                  label={`Copy the record value of ${record.selector} as quoted strings`}
                />
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </section>
  );
}

type Preview = { algorithm: DkimAlgorithm; enabled: boolean };

function AlgorithmChange({
  domain,
  current,
  onChanged,
}: {
  domain: string;
  current: DkimAlgorithm | undefined;
  onChanged: () => void;
}) {
  const [algorithm, setAlgorithm] = useState<DkimAlgorithm>(current ?? 'rsa-sha256');
  const [preview, setPreview] = useState<Preview>();
  const [done, setDone] = useState<string>();
  const action = useAction();
  const call = (dryRun: boolean) =>
    action.run(async () => {
      setDone(undefined);
      const result = await dataOf(
        api().POST('/domain/dkim/set-algorithm-1.0', {
          params: { query: { dry_run: dryRun } },
          body: { domain, algorithm },
        }),
      );
      const outcome = {
        algorithm: result.svc_config.dkim_algorithm,
        enabled: result.svc_config.dkim_enabled,
      };
      if (dryRun) setPreview(outcome);
      else {
        setPreview(undefined);
        setDone(
          `New ${outcome.algorithm} key active: publish its TXT record${outcome.algorithm === 'ed25519-sha256' ? 's (two keys)' : ''} now.`,
        );
        onChanged();
      }
    });
  return (
    <section class="panel" aria-labelledby="change-algorithm">
      <h2 id="change-algorithm">Change the algorithm or rotate the key</h2>
      <p>
        A change creates a new key with a new selector and makes it active at once; the current key is
        retired. Mail signed before the new record is published fails DKIM at the receiver, so publish it
        right away.
      </p>
      <div class="row">
        <label>
          Algorithm{' '}
          <select
            value={algorithm}
            onChange={(event) => {
              setAlgorithm(event.currentTarget.value as DkimAlgorithm);
              setPreview(undefined);
            }}
          >
            {dkimAlgorithms.map((value) => (
              <option key={value} value={value}>
                {value}
                {value === current ? ' (current: a rotation)' : ''}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={action.busy} onClick={() => call(true)}>
          Preview (dry run)
        </button>
      </div>
      {preview === undefined ? null : (
        <div class="notice" role="status">
          <p>
            Dry run: nothing changed. Applying would make <strong>{preview.algorithm}</strong> the active
            algorithm
            {preview.algorithm === current ? ' (a new key: a rotation)' : ''}
            {preview.algorithm === 'ed25519-sha256'
              ? ', with an RSA-2048 key signing beside it for receivers that cannot verify Ed25519'
              : ''}
            .
          </p>
          <button type="button" class="primary" disabled={action.busy} onClick={() => call(false)}>
            Apply the change
          </button>
        </div>
      )}
      {done === undefined ? null : (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </section>
  );
}
