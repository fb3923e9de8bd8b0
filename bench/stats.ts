/** Median with min and max: how every figure in the benchmark is reported. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function figure(samples: readonly number[]): Figure {
  if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, runs: samples.length };
}

export function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** `12.3 (11.0–14.2)`: median (min–max). */
export function fmtFigure(f: Figure, digits = 1): string {
  return `${fmt(f.median, digits)} (${fmt(f.min, digits)}–${fmt(f.max, digits)})`;
}

export function verdict(ok: boolean): string {
  return ok ? 'met' : '**missed**';
}

/** Progress on stderr, so stdout keeps only the table. */
export function progress(message: string): void {
  const at = new Date().toISOString().slice(11, 19);
  process.stderr.write(`[bench ${at}] ${message}\n`);
}

/** Times `a` then `b`, `rounds` times after 3 warm-up rounds: both figures and the per-round ratio a/b. */
export async function sideBySide(
  rounds: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  /** Untimed, between `a` and `b` of each round (e.g. letting a's work after its answer finish). */
  between?: () => Promise<unknown>,
): Promise<{ a: Figure; b: Figure; ratio: Figure }> {
  const timesA: number[] = [];
  const timesB: number[] = [];
  const ratios: number[] = [];
  for (let round = -3; round < rounds; round++) {
    const t0 = performance.now();
    await a();
    const timeA = performance.now() - t0;
    if (between !== undefined) await between();
    const t1 = performance.now();
    await b();
    const timeB = performance.now() - t1;
    if (round < 0) continue;
    timesA.push(timeA);
    timesB.push(timeB);
    ratios.push(timeA / timeB);
  }
  return { a: figure(timesA), b: figure(timesB), ratio: figure(ratios) };
}
