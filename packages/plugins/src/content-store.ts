// Plugin content in memory, by sha256 (hex). The xDS builder inlines Lua from here, the infra
// applier copies content into the proxies' namespaces from here, and the content server serves
// large Wasm from here. Entries no fetched plugin refers to any more are dropped. The bytes held in
// all are bounded (`--plugin-max-total-bytes`): content that would go beyond is refused (TooLarge),
// and its fetch is tried again later, when others may have been dropped.
import { createHash } from 'node:crypto';
import { PluginFetchError } from './errors.js';

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The default bound on the content held in all (`--plugin-max-total-bytes`): 512 MiB. */
export const DEFAULT_PLUGIN_MAX_TOTAL_BYTES = 512 * 1024 * 1024;

export class PluginContentStore {
  private readonly bySha = new Map<string, Buffer>();
  private total = 0;

  /** `maxTotalBytes`: the most bytes held in all (Infinity: no bound). */
  constructor(readonly maxTotalBytes = DEFAULT_PLUGIN_MAX_TOTAL_BYTES) {}

  /** Stores `content`; throws TooLarge, storing nothing, when it would take the total over the bound. */
  put(content: Buffer): string {
    const sha = sha256Hex(content);
    if (this.bySha.has(sha)) return sha;
    this.ensureRoom(content.length, sha);
    this.bySha.set(sha, content);
    this.total += content.length;
    return sha;
  }

  /**
   * Throws TooLarge, as `put` would, when content of `size` bytes (and this sha256, when known) would
   * not fit: a fetch can tell before it downloads.
   */
  ensureRoom(size: number, sha256?: string): void {
    if (sha256 !== undefined && this.bySha.has(sha256)) return;
    if (this.total + size > this.maxTotalBytes)
      throw new PluginFetchError(
        'TooLarge',
        `not fetched: the plugin content held in memory would grow to ${this.total + size} bytes, ` +
          `over the controller's bound of ${this.maxTotalBytes} (--plugin-max-total-bytes); ` +
          `the plugins held take ${this.total}`,
      );
  }

  get(sha256: string): Buffer | undefined {
    return this.bySha.get(sha256);
  }

  /** Keeps only these entries. */
  retain(wanted: ReadonlySet<string>): void {
    for (const [sha, content] of [...this.bySha])
      if (!wanted.has(sha)) {
        this.bySha.delete(sha);
        this.total -= content.length;
      }
  }

  get size(): number {
    return this.bySha.size;
  }

  /** The bytes held now. */
  get bytes(): number {
    return this.total;
  }
}
