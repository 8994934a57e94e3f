// Plugin content in memory, by sha256 (hex). The xDS builder inlines Lua from here, the infra
// applier copies content into the proxies' namespaces from here, and the content server serves
// large Wasm from here. Entries no fetched plugin refers to any more are dropped.
import { createHash } from 'node:crypto';

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export class PluginContentStore {
  private readonly bySha = new Map<string, Buffer>();

  put(content: Buffer): string {
    const sha = sha256Hex(content);
    this.bySha.set(sha, content);
    return sha;
  }

  get(sha256: string): Buffer | undefined {
    return this.bySha.get(sha256);
  }

  /** Keeps only these entries. */
  retain(wanted: ReadonlySet<string>): void {
    for (const sha of [...this.bySha.keys()]) if (!wanted.has(sha)) this.bySha.delete(sha);
  }

  get size(): number {
    return this.bySha.size;
  }
}
