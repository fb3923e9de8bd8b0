import { readFileSync } from 'node:fs';

/**
 * A field of `/proc/<pid>/status` in bytes (`VmRSS`, `VmHWM` …). The peak is read here rather than
 * from `process.resourceUsage().maxRSS`: Linux carries the parent's high-water mark across the
 * fork and exec that start a child, so a child of the benchmark would report the benchmark's peak.
 */
export function statusField(pid: number | 'self', name: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  if (line === undefined) throw new Error(`/proc/${pid}/status has no ${name}`);
  return Number(/(\d+)\s*kB/.exec(line)?.[1]) * 1024;
}

/** This process's peak resident set since it started (VmHWM), bytes. */
export function peakRss(): number {
  return statusField('self', 'VmHWM');
}
