// A fake load-balancer controller, standing in for a cloud's or MetalLB (neither can run here): every
// Service of type LoadBalancer gets an address from one pool, the one its spec.loadBalancerIP asks
// for when that is in the pool; a Service asking for an address outside the pool gets none, as
// MetalLB leaves it. The address is written to status.loadBalancer.ingress, as a real one would.
import type { KubeClient } from '@turnpike/kube';

interface Service {
  metadata: { name: string; namespace: string };
  spec: { type?: string; loadBalancerIP?: string };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

export class FakeLoadBalancer {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private next = 100;
  private readonly given = new Map<string, string>();

  /** `prefix` is a /24 written as its first three octets, e.g. 203.0.113. */
  constructor(
    private readonly client: KubeClient,
    readonly prefix = '203.0.113',
  ) {}

  inPool(ip: string): boolean {
    return ip.startsWith(`${this.prefix}.`) && Number(ip.slice(this.prefix.length + 1)) <= 254;
  }

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      try {
        await this.sync();
      } catch {
        // The next round tries again.
      }
      this.timer = setTimeout(() => void loop(), 300);
    };
    void loop();
  }

  private addressFor(svc: Service): string | undefined {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    const asked = svc.spec.loadBalancerIP;
    if (asked) return this.inPool(asked) ? asked : undefined;
    let ip = this.given.get(key);
    if (!ip) this.given.set(key, (ip = `${this.prefix}.${this.next++}`));
    return ip;
  }

  private async sync(): Promise<void> {
    const list = await this.client.must<{ items: Service[] }>('GET', '/api/v1/services');
    for (const svc of list.items) {
      if (svc.spec.type !== 'LoadBalancer') continue;
      const ip = this.addressFor(svc);
      const want = ip ? [{ ip }] : [];
      const have = (svc.status?.loadBalancer?.ingress ?? []).map((i) => ({ ip: i.ip }));
      if (JSON.stringify(have) === JSON.stringify(want)) continue;
      const path = `/api/v1/namespaces/${svc.metadata.namespace}/services/${svc.metadata.name}/status`;
      await this.client.request('PUT', path, { ...svc, status: { loadBalancer: { ingress: want } } });
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
