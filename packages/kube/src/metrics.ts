// Prometheus metrics (prom-client), one registry per controller process.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'turnpike_process_' });
  const m = {
    registry,
    events: new Counter({
      name: 'turnpike_events_total',
      help: 'Events received, by kind and type',
      labelNames: ['kind', 'type'] as const,
      registers: [registry],
    }),
    translations: new Counter({ name: 'turnpike_translations_total', help: 'Translations run', registers: [registry] }),
    translationSeconds: new Histogram({
      name: 'turnpike_translation_duration_seconds',
      help: 'Time to translate a snapshot',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    xdsPushes: new Gauge({
      name: 'turnpike_xds_pushes',
      help: 'xDS responses sent since start',
      registers: [registry],
    }),
    xdsNacks: new Counter({
      name: 'turnpike_xds_nacks_total',
      help: 'Configurations proxies rejected',
      labelNames: ['gateway'] as const,
      registers: [registry],
    }),
    xdsRefused: new Counter({
      name: 'turnpike_xds_refused_streams_total',
      help:
        'ADS streams refused or ended, and connections closed, by reason: for the client certificate (no-certificate, ' +
        'no-identity, wrong-gateway) or a bound on callers (too-many-streams, gateway-streams, preempted, ' +
        'unidentified, too-many-subscriptions, stream-bytes, gateway-bytes, too-many-pending-connections, ' +
        'idle-connection)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    configLatency: new Histogram({
      name: 'turnpike_config_latency_seconds',
      help:
        'Time from the first event of a change to a proxy acknowledging the configuration that carries it, ' +
        'by Gateway',
      labelNames: ['gateway'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    connectedProxies: new Gauge({
      name: 'turnpike_xds_connected_proxies',
      help: 'Proxies with an open ADS stream',
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'turnpike_status_writes_total',
      help: 'Status writes, by result',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    applyErrors: new Counter({
      name: 'turnpike_apply_errors_total',
      help: 'Failed server-side applies of proxy infrastructure',
      registers: [registry],
    }),
    pluginFetches: new Counter({
      name: 'turnpike_plugin_fetches_total',
      help: 'Plugin fetch attempts, by result (Fetched or the failure reason)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    proxyReportWrites: new Counter({
      name: 'turnpike_proxy_report_writes_total',
      help: "Writes of this replica's ProxyReport (what its proxies said), by result",
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    liveProxyReports: new Gauge({
      name: 'turnpike_proxy_reports_live',
      help: 'Replicas whose ProxyReport is live (renewed within its lease), this one included',
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'turnpike_leader',
      help: '1 while this replica holds the leader lease',
      registers: [registry],
    }),
  };
  return {
    ...m,
    /** The flight recorder's figures, read at each scrape. */
    recorder(read: () => RecorderFigures): void {
      const gauge = (name: string, help: string, value: (f: RecorderFigures) => number) =>
        new Gauge({
          name,
          help,
          registers: [registry],
          collect() {
            this.set(value(read()));
          },
        });
      gauge(
        'turnpike_event_log_recording',
        '1 while the flight recorder writes (0: paused after a failed write)',
        (f) => (f.recording ? 1 : 0),
      );
      gauge('turnpike_event_log_written_bytes', 'Bytes the flight recorder wrote since start', (f) => f.bytesWritten);
      gauge('turnpike_event_log_write_failures', 'Writes that failed (each pauses recording)', (f) => f.writeFailures);
      gauge('turnpike_event_log_segments_opened', 'Segments begun since start', (f) => f.segmentsOpened);
      gauge(
        'turnpike_event_log_segments_pruned',
        'Segments removed to keep the byte and age budget',
        (f) => f.segmentsPruned,
      );
      gauge(
        'turnpike_event_log_checkpoint_seconds',
        'How long the last checkpoint took to write (in slices between events)',
        (f) => f.lastCheckpointMs / 1000,
      );
      gauge('turnpike_event_log_checkpoint_bytes', 'Size of the last checkpoint', (f) => f.lastCheckpointBytes);
    },
  };
}

/** What metrics read of the flight recorder (engine's FlightRecorderStats). */
export interface RecorderFigures {
  recording: boolean;
  bytesWritten: number;
  writeFailures: number;
  segmentsOpened: number;
  segmentsPruned: number;
  lastCheckpointMs: number;
  lastCheckpointBytes: number;
}

export type Metrics = ReturnType<typeof createMetrics>;
