import { useMemo } from 'preact/hooks';
import { api, dataOf } from '../api.ts';
import { type ChartLine, type GuardLine, TimeChart } from '../chart.tsx';
import { AsyncView, Empty } from '../components.tsx';
import { href, navigate, type Route } from '../router.ts';
import { SendingDomainHint } from '../sending-domain-hint.tsx';
import {
  bounceRate,
  complaintRate,
  counters,
  type DashboardGroup,
  type DashboardRange,
  dashboardGroups,
  dashboardRanges,
  guardLevels,
  percent,
  rateLevel,
  seriesTotals,
} from '../stats.ts';
import type { Stats, StatsQueryBody } from '../types.ts';
import { useAsync } from '../use-async.ts';

/**
 * Dashboard: the account's volume and its bounce and complaint rates over time (POST
 * /stats/query-1.0), for the account or by sending domain or tag, with guard lines at the rates
 * where SES reviews and then may pause an account. The range and the grouping live in the address.
 */
function rangeOf(route: Route): DashboardRange {
  const value = route.query.get('range');
  return value !== null && value in dashboardRanges ? (value as DashboardRange) : '24h';
}

function groupOf(route: Route): DashboardGroup {
  const value = route.query.get('group');
  return value !== null && value in dashboardGroups ? (value as DashboardGroup) : 'all';
}

async function stats(range: DashboardRange, group: DashboardGroup): Promise<Stats> {
  const { hours, granularity } = dashboardRanges[range];
  const to = new Date();
  const body: StatsQueryBody = {
    date_from: new Date(to.getTime() - (hours - 1) * 3_600_000).toISOString(),
    date_to: to.toISOString(),
    granularity,
    ...(group === 'all' ? {} : { group_by: group }),
  };
  return dataOf(api().POST('/stats/query-1.0', { body }));
}

export function DashboardPage({ route }: { route: Route }) {
  const range = rangeOf(route);
  const group = groupOf(route);
  const [result, reload] = useAsync(() => stats(range, group), [range, group]);
  const choose = (next: { range?: DashboardRange; group?: DashboardGroup }) =>
    navigate(
      href('dashboard', undefined, {
        range: next.range ?? range,
        group: (next.group ?? group) === 'all' ? undefined : (next.group ?? group),
      }),
    );
  return (
    <>
      <h1>Dashboard</h1>
      <form class="filters" aria-label="Dashboard period" onSubmit={(event) => event.preventDefault()}>
        <div class="row">
          <label>
            Period{' '}
            <select
              value={range}
              onChange={(event) => choose({ range: event.currentTarget.value as DashboardRange })}
            >
              {Object.entries(dashboardRanges).map(([value, { label }]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Group by{' '}
            <select
              value={group}
              onChange={(event) => choose({ group: event.currentTarget.value as DashboardGroup })}
            >
              {Object.entries(dashboardGroups).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={reload}>
            Refresh
          </button>
        </div>
      </form>
      <AsyncView value={result} loading="Loading the statistics" onRetry={reload}>
        {(data) =>
          data.series.length === 0 || data.series.every((series) => isZero(seriesTotals(series))) ? (
            <Empty title="No messages in this period">
              <p>
                The figures appear as messages are accepted, sent, delivered or refused (they are counted
                within seconds). Choose a longer period, or send one with <code>POST /message/add-1.0</code>.
              </p>
              <SendingDomainHint />
            </Empty>
          ) : (
            <StatsView data={data} group={group} />
          )
        }
      </AsyncView>
    </>
  );
}

function isZero(totals: Record<string, number>): boolean {
  return Object.values(totals).every((value) => value === 0);
}

/** The two levels of a rate, as the dashed lines of its chart. */
const guardLines = ({ review, pause }: { review: number; pause: number }): GuardLine[] => [
  { label: 'SES review', value: review },
  { label: 'SES may pause', value: pause },
];

const countFormat = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

function StatsView({ data, group }: { data: Stats; group: DashboardGroup }) {
  const { at, volume, bounces, complaints, bounceGuards, complaintGuards } = useMemo(() => {
    const at = (data.series[0]?.points ?? []).map((point) => point.at);
    const label = (key: string) => (group === 'all' ? 'sent' : key);
    return {
      at,
      volume: data.series.flatMap((series): ChartLine[] =>
        group === 'all'
          ? (['sent', 'delivered', 'bounced', 'complained'] as const).map((counter) => ({
              label: counter,
              values: series.points.map((point) => point[counter]),
            }))
          : [{ label: label(series.key), values: series.points.map((point) => point.sent) }],
      ),
      bounces: data.series.map(
        (series): ChartLine => ({
          label: group === 'all' ? 'bounce rate' : series.key,
          values: series.points.map(bounceRate),
        }),
      ),
      complaints: data.series.map(
        (series): ChartLine => ({
          label: group === 'all' ? 'complaint rate' : series.key,
          values: series.points.map(complaintRate),
        }),
      ),
      bounceGuards: guardLines(guardLevels.bounce),
      complaintGuards: guardLines(guardLevels.complaint),
    };
  }, [data, group]);
  const { totals } = data;
  const bounceLevel = rateLevel(totals.bounce_rate, guardLevels.bounce);
  const complaintLevel = rateLevel(totals.complaint_rate, guardLevels.complaint);
  return (
    <>
      <dl class="totals" aria-label="Totals">
        {counters.map((counter) => (
          <div key={counter}>
            <dt>{counter}</dt>
            <dd>{totals[counter]}</dd>
          </div>
        ))}
        <div class={`rate ${bounceLevel}`}>
          <dt>bounce rate</dt>
          <dd>{percent(totals.bounce_rate)}</dd>
        </div>
        <div class={`rate ${complaintLevel}`}>
          <dt>complaint rate</dt>
          <dd>{percent(totals.complaint_rate)}</dd>
        </div>
      </dl>
      {bounceLevel === 'ok' && complaintLevel === 'ok' ? null : (
        <p class="notice" role="note">
          {bounceLevel === 'ok'
            ? null
            : `The bounce rate is at or above the level where SES ${bounceLevel === 'pause' ? 'may pause' : 'reviews'} an account (${percent(guardLevels.bounce[bounceLevel])}). `}
          {complaintLevel === 'ok'
            ? null
            : `The complaint rate is at or above the level where SES ${complaintLevel === 'pause' ? 'may pause' : 'reviews'} an account (${percent(guardLevels.complaint[complaintLevel])}).`}
        </p>
      )}
      <div class="charts">
        <TimeChart
          title={group === 'all' ? 'Recipients by outcome' : 'Recipients sent'}
          at={at}
          lines={volume}
          format={countFormat}
        />
        <TimeChart
          title="Bounce rate (bounced ÷ sent)"
          at={at}
          lines={bounces}
          guards={bounceGuards}
          format={percent}
        />
        <TimeChart
          title="Complaint rate (complained ÷ delivered)"
          at={at}
          lines={complaints}
          guards={complaintGuards}
          format={percent}
        />
      </div>
      <table class="list">
        <caption>
          {group === 'all' ? 'The account' : `By ${dashboardGroups[group].toLowerCase()}`}, over the period
        </caption>
        <thead>
          <tr>
            <th scope="col">{group === 'all' ? 'Series' : dashboardGroups[group]}</th>
            {counters.map((counter) => (
              <th key={counter} scope="col" class="number">
                {counter}
              </th>
            ))}
            <th scope="col" class="number">
              bounce rate
            </th>
            <th scope="col" class="number">
              complaint rate
            </th>
          </tr>
        </thead>
        <tbody>
          {data.series.map((series) => {
            const sums = seriesTotals(series);
            return (
              <tr key={series.key}>
                <th scope="row">{series.key}</th>
                {counters.map((counter) => (
                  <td key={counter} class="number">
                    {sums[counter]}
                  </td>
                ))}
                <td class="number">{percent(bounceRate(sums))}</td>
                <td class="number">{percent(complaintRate(sums))}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
