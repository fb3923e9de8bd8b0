/**
 * Imported first by bench/run.ts: settings the service reads once when its modules load must be in
 * place before any of them is imported. On its own host the benchmark lifts the per-caller rate
 * limit (50/s, burst 100), or the throughput run would measure 429 answers.
 */
if (process.env.BENCH_URL === undefined) {
  process.env.RATE_LIMIT_RPS ??= '1000000';
  process.env.RATE_LIMIT_BURST ??= '1000000';
}
// The scale-and-cost section meters the messages' own requests: the one-minute dispatcher must not
// run inside its windows (it is measured on its own, as a fixed cost per run).
if (process.env.BENCH_URL === undefined) process.env.DISPATCHER_INTERVAL_SECONDS ??= '3600';
// Section 14 fills and empties the DKIM key pool itself: the pool's schedule must not refill it
// while the empty-pool adds are measured.
if (process.env.BENCH_URL === undefined) process.env.DKIM_INTERVAL_SECONDS ??= '3600';
