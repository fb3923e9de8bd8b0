/**
 * The trackable links of recently clicked messages, per function instance: a message's stored HTML
 * never changes, so repeated clicks of its links (the recipients of one newsletter) answer without
 * reading it again. Bounded in entries and in age, so memory stays small and a deleted message
 * stops answering within `maxAgeMs`.
 */
export class LinkCache {
  private readonly entries = new Map<string, { links: readonly string[]; at: number }>();

  private readonly maxEntries: number;
  private readonly maxAgeMs: number;

  constructor(maxEntries: number, maxAgeMs: number) {
    this.maxEntries = maxEntries;
    this.maxAgeMs = maxAgeMs;
  }

  get(messageUuid: string, now: number): readonly string[] | undefined {
    const entry = this.entries.get(messageUuid);
    if (entry === undefined) return undefined;
    this.entries.delete(messageUuid);
    if (now - entry.at > this.maxAgeMs) return undefined;
    // Re-inserted: the Map's order is the order of use, oldest first.
    this.entries.set(messageUuid, entry);
    return entry.links;
  }

  set(messageUuid: string, links: readonly string[], now: number): void {
    this.entries.delete(messageUuid);
    this.entries.set(messageUuid, { links, at: now });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
