import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envString } from './env.ts';

/** Decodes a base64 key of exactly 32 bytes; `from` names where it came from in the error. */
export function decodeKey(base64: string, from: string): Uint8Array {
  const key = Buffer.from(base64.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${from} must hold 32 bytes (base64), got ${key.length}`);
  return new Uint8Array(key);
}

/**
 * A 32-byte key of the local host: from the environment variable `variable` (base64), else the
 * file `<DATA_DIR>/<fileName>`, created on first use. Several processes may start at once (host and
 * tests), so the file is written under a temporary name and linked into place, which fails if
 * another process won; everyone then reads the winner's key. Undefined on Lambda without the
 * variable: the file system there is ephemeral, and a key written to it would be lost with the instance.
 */
export function localKey(variable: string, fileName: string): Uint8Array | undefined {
  const configuredKey = envString(variable);
  if (configuredKey !== undefined) return decodeKey(configuredKey, variable);
  if (process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined) return undefined;
  const dir = resolve(envString('DATA_DIR', '.data') as string);
  const file = join(dir, fileName);
  try {
    return decodeKey(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return decodeKey(readFileSync(file, 'utf8'), file);
}
