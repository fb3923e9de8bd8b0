import { useState } from 'preact/hooks';
import { api, dataOf } from './api.ts';
import { CopyButton, ErrorNotice, StatusBadge, Time } from './components.tsx';
import { download } from './download.ts';
import type { DomainRecordView, DomainView } from './types.ts';
import { useAction } from './use-async.ts';

/**
 * A self-service domain's records (docs/domains.md): each with copy buttons, its status, what DNS
 * answered and a plain-language fix; "Check now", a BIND zone-file fragment, and the receiving and
 * tracking switches.
 */
const fixes: Record<string, string> = {
  HOST_NOT_FOUND:
    'Nothing exists at this name yet. Create the record with exactly this name (if your DNS panel adds the domain itself, enter only the part before it).',
  TYPE_NOT_FOUND: 'The name exists, but without a record of this type: add one beside what is there.',
  INVALID_VALUE:
    'A record is there with another value: compare what we found with the value above and replace it.',
  MULTIPLE_RECORDS:
    'We found several records where one is expected: keep one (for SPF, merge the mechanisms into a single v=spf1 record).',
  DNS_SERVER_ERROR: 'The DNS lookup failed or timed out: nothing to fix, we check again.',
};

export function fixFor(record: DomainRecordView): string | undefined {
  if (record.error === undefined) return undefined;
  if (record.error.code === 'MULTIPLE_RECORDS' && record.purpose === 'mail_from_spf')
    return `We found ${record.error.observed.length} SPF records; keep one.`;
  return fixes[record.error.code];
}

const quoted = (value: string) => (value.match(/.{1,255}/g) ?? ['']).map((chunk) => `"${chunk}"`).join(' ');

/** The records as a BIND zone-file fragment (absolute names, so it works in any zone). */
export function zoneFragment(view: DomainView): string {
  const lines = [`; DNS records for ${view.domain} (svc-mail)`];
  for (const record of view.records) {
    const data = record.type === 'MX' ? `${record.priority ?? 10} ${record.value}.` : quoted(record.value);
    lines.push(`${record.name}.\t3600\tIN\t${record.type}\t${data}`);
  }
  return `${lines.join('\n')}\n`;
}

function RecordRow({ record }: { record: DomainRecordView }) {
  const fix = fixFor(record);
  return (
    <tr class={`dns-record ${record.status}`}>
      <td>
        {record.purpose.replaceAll('_', ' ')}
        {record.required ? '' : <span class="muted"> (recommended)</span>}
      </td>
      <td>
        <code>{record.type}</code>
      </td>
      <td>
        <code class="value">{record.name}</code>{' '}
        <CopyButton text={record.name} label={`Copy the name of the ${record.purpose} record`} />
      </td>
      <td>
        <code class="value">
          {record.priority === undefined ? '' : `${record.priority} `}
          {record.value}
        </code>{' '}
        <CopyButton text={record.value} label={`Copy the value of the ${record.purpose} record`} />
      </td>
      <td>
        <StatusBadge status={record.status} />
        {record.checked_at === undefined ? null : (
          <div class="muted">
            <Time value={record.checked_at} />
          </div>
        )}
        {record.error === undefined ? null : (
          <div class="record-error">
            <strong>{record.error.code}</strong>
            {record.error.observed.length === 0 ? null : (
              <div>
                We found:{' '}
                {record.error.observed.map((value) => (
                  <code key={value} class="value observed">
                    {value}
                  </code>
                ))}
              </div>
            )}
            {fix === undefined ? null : <p class="fix">{fix}</p>}
          </div>
        )}
      </td>
    </tr>
  );
}

export function DomainRecords({
  view,
  onChange,
}: {
  view: DomainView;
  onChange: (view: DomainView) => void;
}) {
  const action = useAction();
  const [note, setNote] = useState<string>();
  const post = (path: '/domain/verify-1.0' | '/domain/update-1.0', body: Record<string, unknown>) =>
    action.run(async () => {
      setNote(undefined);
      const result = await dataOf(api().POST(path, { body: body as never }));
      onChange((result as { domain: DomainView }).domain);
      if (path === '/domain/verify-1.0') setNote('Checked just now.');
    });
  return (
    <section class="panel" aria-labelledby="records-to-publish">
      <h2 id="records-to-publish">Records to publish</h2>
      <p>
        Status <StatusBadge status={view.status} />{' '}
        {view.sending_ready ? 'Sending ready.' : 'Not sending yet: publish the required records, then check.'}
        {view.claim === true
          ? ' Another account holds this domain: publishing this DKIM record proves it is yours, and the domain moves to your account.'
          : ''}
      </p>
      <table class="list compact records-table">
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {view.records.map((record) => (
            <RecordRow key={record.purpose} record={record} />
          ))}
        </tbody>
      </table>
      <div class="row">
        <button
          type="button"
          class="primary"
          disabled={action.busy}
          onClick={() => post('/domain/verify-1.0', { domain: view.domain })}
        >
          Check now
        </button>
        <button
          type="button"
          onClick={() => download(`${view.domain}.zone`, zoneFragment(view), 'text/plain;charset=utf-8')}
        >
          Download BIND zone fragment
        </button>
        {view.claim === true ? null : (
          <>
            <label>
              <input
                type="checkbox"
                checked={view.receiving}
                disabled={action.busy}
                onChange={(event) =>
                  post('/domain/update-1.0', { domain: view.domain, receiving: event.currentTarget.checked })
                }
              />{' '}
              Receiving
            </label>
            <label>
              <input
                type="checkbox"
                checked={view.tracking.opens}
                disabled={action.busy}
                onChange={(event) =>
                  post('/domain/update-1.0', {
                    domain: view.domain,
                    tracking: { ...view.tracking, opens: event.currentTarget.checked },
                  })
                }
              />{' '}
              Track opens
            </label>
            <label>
              <input
                type="checkbox"
                checked={view.tracking.clicks}
                disabled={action.busy}
                onChange={(event) =>
                  post('/domain/update-1.0', {
                    domain: view.domain,
                    tracking: { ...view.tracking, clicks: event.currentTarget.checked },
                  })
                }
              />{' '}
              Track clicks
            </label>
          </>
        )}
      </div>
      {note === undefined ? null : (
        <p class="notice" role="status">
          {note}
        </p>
      )}
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </section>
  );
}
