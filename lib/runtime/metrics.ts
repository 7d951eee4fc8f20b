import type { Counter, Gauge, Registry } from 'prom-client';

/** The monitor's Prometheus metrics; prom-client is loaded only by the commands that serve them. */
export interface Metrics {
  readonly registry: Registry;
  readonly renders: Counter<'result'>;
  readonly lastChange: Gauge;
  readonly resolveFailures: Counter<'reason'>;
  readonly watchRestarts: Counter<'source'>;
  readonly recordsServed: Gauge<'kind'>;
  readonly ready: Gauge;
}

export async function createMetrics(): Promise<Metrics> {
  const prom = await import('prom-client');
  const registry = new prom.Registry();
  // prom-client samples the event-loop delay every 10 ms by default: a timer waking the process
  // 100 times a second, three quarters of an idle monitor's CPU time. Once a second is plenty.
  prom.collectDefaultMetrics({ register: registry, prefix: 'lbdns_', eventLoopMonitoringPrecision: 1000 });
  const opts = { registers: [registry] };
  return {
    registry,
    renders: new prom.Counter({ name: 'lbdns_renders_total', help: 'Corefile renders by result: written, unchanged, failed', labelNames: ['result'], ...opts }),
    lastChange: new prom.Gauge({ name: 'lbdns_last_change_timestamp_seconds', help: 'When the Corefile on disk last changed (Unix time)', ...opts }),
    resolveFailures: new prom.Counter({ name: 'lbdns_resolve_failures_total', help: 'LB hostname resolutions that failed after their retries, by reason', labelNames: ['reason'], ...opts }),
    watchRestarts: new prom.Counter({ name: 'lbdns_watch_restarts_total', help: 'API watches restarted after a failure, by source', labelNames: ['source'], ...opts }),
    recordsServed: new prom.Gauge({ name: 'lbdns_records_served', help: 'Addresses served by kind: lb (api, api-int, apps, extra names) and node', labelNames: ['kind'], ...opts }),
    ready: new prom.Gauge({ name: 'lbdns_ready', help: '1 once the first complete Corefile was rendered', ...opts }),
  };
}
