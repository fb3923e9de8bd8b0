import type { CompiledTemplate } from './render.ts';

/**
 * Compiled template versions kept for the life of the function instance, least recently used
 * first out. A stored version never changes (published or draft, every write makes a new version),
 * so its entry is keyed by the template's id and version and never goes stale; inline parts (the
 * editor's preview) are keyed by a hash of their text. Bounded by entries and by template bytes,
 * so a function never holds more than a few tens of MB of them.
 */
export class CompiledTemplateCache {
  private readonly entries = new Map<string, CompiledTemplate>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  constructor(maxEntries = 500, maxBytes = 32 * 1024 * 1024) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  get(key: string): CompiledTemplate | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, template: CompiledTemplate): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    this.entries.set(key, template);
    this.bytes += template.bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      if (oldest === key) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The one cache of a function instance. */
export const compiledTemplates = new CompiledTemplateCache();
