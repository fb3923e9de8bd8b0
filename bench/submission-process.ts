/**
 * The submission server's own entry point (submission/main.ts, as the container runs it) in a
 * process of its own, which also answers `memory` on its IPC channel with `process.memoryUsage()`:
 * the benchmark reads the heap there and the RSS from /proc.
 * Usage: node bench/submission-process.ts (API_URL, TLS_CERT, TLS_KEY and the ports in the environment)
 */
process.on('message', (message) => {
  if (message === 'memory') process.send?.(process.memoryUsage());
});
await import('../submission/main.ts');
