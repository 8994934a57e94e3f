// ProxyReport (turnpike.dev/v1alpha1): what one controller replica learned from the proxies connected
// to it, published through the API server so that every replica (and the leader, which writes the
// statuses) judges a Gateway by all of its proxies, not by the share that happens to be connected to
// it. One object per replica, in the controller's namespace, written by that replica only.
import type { KubeObject } from './meta.js';

export const PROXY_REPORT_KIND = 'ProxyReport';

/** One proxy of a Gateway as its replica sees it. */
export interface ReportedProxy {
  /** The proxy's node id (its Pod name). */
  id: string;
  /** When its stream opened: of two reports naming one proxy, the newer connection is the one that counts. */
  connectedAt: string;
  /** It has not acknowledged the configuration served now (for over a second, or it rejected it). */
  behind?: true;
  /** The last configuration it rejected, while the rejection stands. */
  rejected?: { typeUrl: string; version: string; message: string };
}

/** One Gateway's proxies on one replica. */
export interface ReportedGateway {
  namespace: string;
  name: string;
  /** Proxies with an open stream for this Gateway on this replica (exact, even when `proxies` is cut short). */
  connected: number;
  /** The proxies, those behind first, then by id; at most MAX_REPORTED_PROXIES. */
  proxies: ReportedProxy[];
  /**
   * The plugins (`namespace/name@sha256`) the configuration every proxy here acknowledged runs; absent
   * while some proxy here has acknowledged nothing since it connected.
   */
  plugins?: string[];
  /** What this replica's serving path withheld from the Gateway's proxies (as Envoy would refuse it). */
  withheld?: { resource: string; field: string; message: string; source?: string; object?: string }[];
}

export interface ProxyReport extends KubeObject {
  spec: {
    /** The replica that writes it (its Pod name). */
    replica: string;
    /**
     * Renewed every third of the lease while the replica runs. A report whose renewTime has not changed
     * for a lease duration, as the reader's own clock measures it, is gone.
     */
    renewTime: string;
    leaseDurationSeconds: number;
    /** Only Gateways with a connected proxy here, by namespace and name. */
    gateways: ReportedGateway[];
  };
}

/** A report lists at most this many proxies per Gateway (those behind first): the object stays well under 1 MiB. */
export const MAX_REPORTED_PROXIES = 500;

/** A replica's report object, its Gateways in name order (so that equal content is equal text). */
export function proxyReportObject(
  namespace: string,
  replica: string,
  gateways: Iterable<ReportedGateway>,
  renewTime: string,
  leaseDurationSeconds: number,
): ProxyReport {
  const sorted = [...gateways].sort((a, b) =>
    a.namespace !== b.namespace ? (a.namespace < b.namespace ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: PROXY_REPORT_KIND,
    metadata: { name: replica, namespace },
    spec: { replica, renewTime, leaseDurationSeconds, gateways: sorted },
  };
}
