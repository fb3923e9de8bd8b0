/** Small readers for environment variables: a bad value fails at module load, not mid-request. */

export function envString(name: string, fallback?: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

export function envList(name: string): string[] {
  return (envString(name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

export function envNumber(name: string, fallback: number, { min = 0 }: { min?: number } = {}): number {
  const raw = envString(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`Configuration ${name} must be a number >= ${min}, got "${raw}"`);
  }
  return value;
}
