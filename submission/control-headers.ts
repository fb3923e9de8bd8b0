import type { HeaderField } from './message-headers.ts';

/**
 * The `X-Svc-*` headers an SMTP client may set to reach the API's fields (docs/smtp.md). They are
 * read here and removed from the message before it is sent, so they are never signed or delivered.
 */
export interface ControlFields {
  tags?: { name: string; value: string }[];
  metadata?: Record<string, string>;
  stream?: string;
  tracking?: { opens?: boolean | string; clicks?: boolean | string };
  idempotencyKey?: string;
}

export const controlPrefix = 'x-svc-';
const metadataPrefix = 'x-svc-metadata-';

/** Whether a header field is removed before the message goes to the API. */
export function isRemovedHeader(name: string): boolean {
  return name === 'bcc' || name.startsWith(controlPrefix);
}

/** `true`/`yes`/`on`/`1` and their opposites; anything else goes to the API as given, which names it. */
function flag(value: string): boolean | string {
  const lower = value.toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(lower)) return true;
  if (['false', 'no', 'off', '0'].includes(lower)) return false;
  return value;
}

/** `name=value, name=value` (a name without `=` is a tag with an empty value). */
function tagList(value: string): { name: string; value: string }[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals === -1
        ? { name: part, value: '' }
        : { name: part.slice(0, equals).trim(), value: part.slice(equals + 1).trim() };
    });
}

export function controlFields(fields: readonly HeaderField[]): ControlFields {
  const control: ControlFields = {};
  for (const { name, value } of fields) {
    if (name === 'x-svc-tags') control.tags = [...(control.tags ?? []), ...tagList(value)];
    else if (name.startsWith(metadataPrefix)) {
      // Header names are case-insensitive and arrive lower-cased: metadata keys are therefore lower case.
      control.metadata = { ...control.metadata, [name.slice(metadataPrefix.length)]: value };
    } else if (name === 'x-svc-stream') control.stream = value;
    else if (name === 'x-svc-idempotency-key') control.idempotencyKey = value;
    else if (name === 'x-svc-track-opens') control.tracking = { ...control.tracking, opens: flag(value) };
    else if (name === 'x-svc-track-clicks') control.tracking = { ...control.tracking, clicks: flag(value) };
  }
  return control;
}
