// Reads a Kubernetes list response chunk by chunk. Each element of the top-level "items" array is parsed
// on its own as soon as its closing brace is in, so a large response can be parsed while it arrives,
// overlapping the API server's encoding (it streams list responses since 1.33; KubeClient.list decides
// when), and no string the size of the whole response is ever made: at 100 000 routes that response is
// ~80 MB, which took 2.2–2.7 s to join and parse after its last byte. Everything but the items (kind,
// apiVersion, metadata with resourceVersion and continue) is kept and parsed at the end.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const SPACE = 0x20;

export class ListResponseError extends Error {}

export class ListResponseReader {
  /** Nesting depth of objects and arrays outside strings; the response's own object is depth 1. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The last string seen at depth 1: the key of the value that follows it. */
  private key = '';
  private keyFrom = -1;
  private inItems = false;
  private itemsSeen = false;
  /** The element being read began in an earlier chunk: its pieces so far. */
  private itemParts: Buffer[] = [];
  private inItem = false;
  /** The response without its items' contents. */
  private readonly envelope: Buffer[] = [];
  private count = 0;

  constructor(private readonly onItem: (item: unknown) => void) {}

  push(chunk: Buffer): void {
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let itemStart = this.inItem ? 0 : -1;
    let envelopeStart = this.inItems ? -1 : 0;
    if (this.keyFrom >= 0) this.keyFrom = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const b = chunk[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) {
          inString = false;
          if (this.keyFrom >= 0) {
            this.key += chunk.toString('latin1', this.keyFrom, i);
            this.keyFrom = -1;
          }
        }
        continue;
      }
      switch (b) {
        case QUOTE:
          inString = true;
          if (depth === 1) {
            this.key = '';
            this.keyFrom = i + 1;
          } else if (depth === 2 && this.inItems) this.notAnObject();
          break;
        case OPEN_BRACE:
          if (depth === 2 && this.inItems) itemStart = i;
          depth++;
          break;
        case OPEN_BRACKET:
          if (depth === 1 && this.key === 'items' && !this.itemsSeen) {
            this.inItems = this.itemsSeen = true;
            this.envelope.push(Buffer.from(chunk.subarray(envelopeStart, i + 1)));
            envelopeStart = -1;
          } else if (depth === 2 && this.inItems) this.notAnObject();
          depth++;
          break;
        case CLOSE_BRACE:
          if (--depth < 0) this.unbalanced();
          if (depth === 2 && itemStart >= 0) {
            this.item(chunk, itemStart, i + 1);
            itemStart = -1;
          }
          break;
        case CLOSE_BRACKET:
          if (--depth < 0) this.unbalanced();
          if (depth === 1 && this.inItems) {
            this.inItems = false;
            envelopeStart = i;
          }
          break;
        default:
          if (depth === 2 && this.inItems && b > SPACE && b !== COMMA) this.notAnObject();
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    if (this.keyFrom >= 0) this.key += chunk.toString('latin1', this.keyFrom, n);
    this.inItem = itemStart >= 0;
    if (this.inItem) this.itemParts.push(chunk.subarray(itemStart));
    if (envelopeStart >= 0) this.envelope.push(Buffer.from(chunk.subarray(envelopeStart)));
  }

  /** The response's envelope (its items array empty), once every byte is in. */
  end<T>(): T {
    if (this.depth !== 0 || this.inString || this.envelope.length === 0)
      throw new ListResponseError(`list response ended early (after ${this.count} items)`);
    try {
      return JSON.parse(Buffer.concat(this.envelope).toString('utf8')) as T;
    } catch (e) {
      throw new ListResponseError(`list response is not JSON: ${(e as Error).message}`);
    }
  }

  private item(chunk: Buffer, start: number, end: number): void {
    let text: string;
    if (this.itemParts.length === 0) text = chunk.toString('utf8', start, end);
    else {
      this.itemParts.push(chunk.subarray(start, end));
      text = Buffer.concat(this.itemParts).toString('utf8');
      this.itemParts = [];
    }
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch (e) {
      throw new ListResponseError(`list response item ${this.count} is not JSON: ${(e as Error).message}`);
    }
    this.count++;
    this.onItem(item);
  }

  private unbalanced(): never {
    throw new ListResponseError('list response is not JSON: a bracket closes what was never opened');
  }

  private notAnObject(): never {
    throw new ListResponseError(`list response item ${this.count} is not an object`);
  }
}
