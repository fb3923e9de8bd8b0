import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import {
  boundedEntry,
  type HistoryEntry,
  maxHistoryEntries,
  type StoredRecipient,
} from '../model/message.ts';

/**
 * The part of a message item that grows and changes as the message goes out (docs/data-model.md,
 * "Message state"): the recipients with their statuses, the status history, the relay's answer and
 * the composition record. It is stored as one Brotli-compressed JSON attribute, `st`: these lists
 * repeat addresses, replies and timestamps, and every byte of the item is paid again at each of its
 * writes, so compressed the delivered item of a typical message stays within one write unit.
 *
 * Every writer starts from the state it read and writes the whole new state under the condition
 * that `st` is still what it read (`stateGuard`); when another write came first, it builds the new
 * state again from the item the failed condition returned (message-delivery.ts, messages.ts).
 */
export interface MessageState {
  recipients: StoredRecipient[];
  history: HistoryEntry[];
  relay?: { message_id?: string; response?: string };
  composed?: {
    at: string;
    selectors?: string[];
    transport: 'smtp' | 'ses';
    unsubscribe_url?: string;
    tracking?: { opens: boolean; clicks: boolean };
    copies?: Array<{ recipient: number; at: string; selectors?: string[] }>;
  };
}

export const stateAttribute = 'st';

/** Items written before the state was compressed kept these as plain attributes. */
export const plainStateAttributes = ['recipients', 'history', 'relay', 'composed'] as const;

/** Quality 5 in text mode: within a few bytes of the best ratio on small JSON, at a fraction of its time. */
const brotliOptions = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

export function encodeState(state: MessageState): Uint8Array {
  const plain: MessageState = { recipients: state.recipients, history: state.history };
  if (state.relay !== undefined) plain.relay = state.relay;
  if (state.composed !== undefined) plain.composed = state.composed;
  return brotliCompressSync(JSON.stringify(plain), brotliOptions);
}

/** The stored state bytes: a Uint8Array from the SDK, a base64 string in a Lambda stream event. */
function bytesOf(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'base64');
  return undefined;
}

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/**
 * The state of an item (unmarshalled), and the stored bytes a write must find unchanged (absent: an
 * item that still has the plain attributes, or none).
 */
export function readState(item: Record<string, unknown>): { state: MessageState; stored?: Uint8Array } {
  const stored = bytesOf(item[stateAttribute]);
  if (stored !== undefined) {
    const decoded = JSON.parse(brotliDecompressSync(stored).toString('utf8')) as Partial<MessageState>;
    return {
      state: { ...decoded, recipients: list(decoded.recipients), history: list(decoded.history) },
      stored,
    };
  }
  const state: MessageState = {
    recipients: list<StoredRecipient>(item.recipients),
    history: list<HistoryEntry>(item.history),
  };
  if (item.relay !== undefined) state.relay = item.relay as MessageState['relay'];
  if (item.composed !== undefined) state.composed = item.composed as MessageState['composed'];
  return { state };
}

/** The condition that the item's state is still `stored` (for a plain item: not compressed yet). */
export function stateGuard(stored: Uint8Array | undefined): {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  return stored === undefined
    ? { condition: 'attribute_not_exists(#st)', names: { '#st': stateAttribute }, values: {} }
    : { condition: '#st = :st', names: { '#st': stateAttribute }, values: { ':st': stored } };
}

export const sameState = (a: Uint8Array | undefined, b: Uint8Array | undefined): boolean =>
  a === undefined || b === undefined ? a === b : Buffer.from(a).equals(Buffer.from(b));

/**
 * The history with `entries` appended, each detail clipped. It holds at most `maxHistoryEntries`:
 * past that, the newest entry takes the last place (its detail starts "history full, latest
 * change:"), so the current status always shows (docs/data-model.md, "Item size").
 */
export function appendHistory(
  history: readonly HistoryEntry[],
  entries: readonly HistoryEntry[],
): HistoryEntry[] {
  const added = entries.map(boundedEntry);
  if (history.length + added.length <= maxHistoryEntries) return [...history, ...added];
  const latest = added[added.length - 1] as HistoryEntry;
  return [
    ...history.slice(0, maxHistoryEntries - 1),
    boundedEntry({ ...latest, detail: `history full, latest change: ${latest.detail ?? latest.status}` }),
  ];
}
