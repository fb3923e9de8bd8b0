import { type Figure, sideBySide } from './stats.ts';

/**
 * `sideBySide` of two GETs from a client in its own process, as a recipient's mail client is: a
 * route that records after its answer (the tracking routes) runs that work in the local host's
 * process, and a client in the same process could read the answer only once that work yielded.
 * Each round GETs the next URL of `a` (one per round and warm-up, or one for all), then `between`
 * (untimed), then `b`. Prints `{ a, b, ratio }` as JSON.
 * Usage: node bench/side-by-side-client.ts '<json: { a: string[], b, between?, rounds, userAgent }>'
 */
export interface ClientPlan {
  a: string[];
  b: string;
  between?: string;
  rounds: number;
  userAgent: string;
}

async function get(url: string, userAgent: string): Promise<number> {
  const response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });
  await response.arrayBuffer();
  return response.status;
}

async function main(plan: ClientPlan): Promise<{ a: Figure; b: Figure; ratio: Figure }> {
  let next = 0;
  const between = plan.between;
  return sideBySide(
    plan.rounds,
    () => get(plan.a[Math.min(next++, plan.a.length - 1)] as string, plan.userAgent),
    () => get(plan.b, plan.userAgent),
    between === undefined ? undefined : () => get(between, plan.userAgent),
  );
}

if (import.meta.main) {
  const result = await main(JSON.parse(process.argv[2] as string) as ClientPlan);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
