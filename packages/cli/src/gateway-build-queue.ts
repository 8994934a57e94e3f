// Which Gateways' xDS is built now and which in idle time. When one output changes many Gateways at once
// (a cold start, a Service every Gateway uses), those some stream is watching are built and pushed first;
// the others follow a few per turn of the event loop, and one a stream starts watching jumps the queue.
// A proxy then waits for its own Gateway's build, not for every Gateway's: `run --dir` beside one Envoy,
// or a controller restart while proxies reconnect. Every Gateway still gets built (the build's screen
// feeds their statuses), always from the newest output, so the end state is the same as building all
// at once.
import type { EngineOutput } from '@turnpike/engine';

export interface GatewayBuild {
  out: EngineOutput;
  gateways: string[];
  /** Clusters whose endpoints changed: only with the output that changed them. */
  endpoints: readonly string[];
  /** When the earliest change this build carries began. */
  since: string;
}

export interface GatewayBuildQueueOptions {
  /** Does a stream (a proxy or a debug read) watch this Gateway's snapshot now? */
  watched: (gateway: string) => boolean;
  build: (b: GatewayBuild) => void;
  /** Fewer changed Gateways than this are built at once: a few builds take milliseconds. */
  deferAt?: number;
  /** Waiting Gateways built per turn of the event loop. */
  perTurn?: number;
}

export class GatewayBuildQueue {
  /** Gateway → `since` of the earliest change it waits to carry. */
  private readonly waiting = new Map<string, string>();
  private readonly urgent = new Set<string>();
  private latest?: EngineOutput;
  private scheduled?: NodeJS.Immediate;
  private readonly deferAt: number;
  private readonly perTurn: number;

  constructor(private readonly o: GatewayBuildQueueOptions) {
    this.deferAt = o.deferAt ?? 8;
    this.perTurn = o.perTurn ?? 4;
  }

  /** Gateways waiting for their build. */
  get pending(): number {
    return this.waiting.size;
  }

  accept(out: EngineOutput): void {
    this.latest = out;
    const changed = new Set(out.changes.gateways);
    for (const gateway of this.waiting.keys()) changed.add(gateway);
    const now: string[] = [];
    for (const gateway of changed) {
      if (changed.size < this.deferAt || this.o.watched(gateway)) {
        now.push(gateway);
        this.waiting.delete(gateway);
        this.urgent.delete(gateway);
      } else if (!this.waiting.has(gateway)) this.waiting.set(gateway, out.since);
    }
    this.o.build({ out, gateways: now, endpoints: out.changes.endpoints, since: out.since });
    this.schedule();
  }

  /** A stream began watching `gateway`: if its build waits, it is next. */
  watching(gateway: string): void {
    if (!this.waiting.has(gateway)) return;
    this.urgent.add(gateway);
    this.schedule();
  }

  /** Drops what waits (the sink is closing). */
  close(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.waiting.clear();
    this.urgent.clear();
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.size === 0) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.turn();
    });
  }

  private turn(): void {
    const out = this.latest;
    if (!out) return;
    const gateways = [...this.urgent];
    this.urgent.clear();
    for (const gateway of this.waiting.keys()) {
      if (gateways.length >= this.perTurn) break;
      if (!gateways.includes(gateway)) gateways.push(gateway);
    }
    let since = out.since;
    for (const gateway of gateways) {
      const s = this.waiting.get(gateway)!;
      if (s < since) since = s;
      this.waiting.delete(gateway);
    }
    this.o.build({ out, gateways, endpoints: [], since });
    this.schedule();
  }
}
