import type { Counter, Gauge, Registry } from 'prom-client';

/** The monitor's Prometheus metrics; prom-client is loaded only by the commands that serve them. */
export interface Metrics {
  readonly registry: Registry;
  readonly renders: Counter<'result'>;
  readonly lastChange: Gauge;
  readonly resolveFailures: Counter<'reason'>;
  readonly watchRestarts: Counter<'source'>;
  readonly recordsServed: Gauge<'kind'>;
  /** What /readyz says, read at scrape time so the gauge and the probe never disagree; the health server sets it. */
  ready: () => boolean;
  /** Names an object asked for and lbdns refused, counted when the refusal first appears; `source` is the object kind (dnsrecords, gateways…). */
  readonly namesRefused: Counter<'source' | 'reason'>;
  /** Other data refused from cluster objects, counted when it first appears. */
  readonly sourceDataIgnored: Counter<'source'>;
  /** An LB's published addresses (Infrastructure status) differing from the served ones, counted when each difference first appears. */
  readonly lbSourcesDisagree: Counter<'lb'>;
  /** Checks of an address asked for api-int that found no kube-apiserver there, by reason. */
  readonly apiIntMoveFailures: Counter<'reason'>;
  /** 1 while the Corefile on disk is not the one the sources call for (render or write failing). */
  readonly corefileOutOfDate: Gauge;
  /** 1 while the node dnsmasq's drop-in or api-int hosts file (--dnsmasq-out) cannot be written. */
  readonly dnsmasqOutOfDate: Gauge;
  /** LB host names whose latest lookup failed, by what is served meanwhile; read at scrape time. */
  unresolvable: () => readonly { readonly keptLastGood: boolean }[];
  /** 1 while the Infrastructure status holds what lbdns last computed, 0 while publishing it fails. */
  readonly infraStatusInSync: Gauge;
  /** DNS names served, by source kind: lb, dnsrecord, dnspolicy, dnsrecord.kuadrant.io. */
  readonly namesServed: Gauge<'source'>;
}

/**
 * `corefile` (watch-lb-status) or `infra-status` (update-infra-status --watch): each exports
 * the gauges of its own output only, so an alert on the other's reads nothing rather than a 0.
 */
export async function createMetrics(purpose: 'corefile' | 'infra-status'): Promise<Metrics> {
  // A CommonJS package: its exports object is the namespace's default, under Node and in the build alike.
  const { default: prom } = await import('prom-client');
  const registry = new prom.Registry();
  // prom-client samples the event-loop delay every 10 ms by default: a timer waking the process
  // 100 times a second, three quarters of an idle monitor's CPU time. Once a second is plenty.
  prom.collectDefaultMetrics({ register: registry, prefix: 'lbdns_', eventLoopMonitoringPrecision: 1000 });
  const opts = { registers: [registry] };
  const metrics: Metrics = {
    registry,
    renders: new prom.Counter({ name: 'lbdns_renders_total', help: 'Corefile renders by result: written, unchanged, failed', labelNames: ['result'], ...opts }),
    lastChange: new prom.Gauge({ name: 'lbdns_last_change_timestamp_seconds', help: 'When the Corefile on disk last changed (Unix time)', registers: purpose === 'corefile' ? [registry] : [] }),
    resolveFailures: new prom.Counter({ name: 'lbdns_resolve_failures_total', help: 'LB hostname resolutions that failed after their retries, by reason', labelNames: ['reason'], ...opts }),
    watchRestarts: new prom.Counter({ name: 'lbdns_watch_restarts_total', help: 'API watches restarted after a failure, by source', labelNames: ['source'], ...opts }),
    recordsServed: new prom.Gauge({ name: 'lbdns_records_served', help: 'Addresses served by kind: lb (api, api-int, apps, extra names: the Corefile), gateway (the Gateway zone files) and node', labelNames: ['kind'], ...opts }),
    namesServed: new prom.Gauge({ name: 'lbdns_names_served', help: 'DNS names served by source kind: lb, dnsrecord, dnspolicy, dnsrecord.kuadrant.io', labelNames: ['source'], ...opts }),
    ready: () => false,
    namesRefused: new prom.Counter({ name: 'lbdns_names_refused_total', help: 'DNS names cluster objects asked for that lbdns refused to serve, counted when each refusal first appears, by object kind and reason', labelNames: ['source', 'reason'], ...opts }),
    apiIntMoveFailures: new prom.Counter({ name: 'lbdns_api_int_move_failures_total', help: 'Checks of the address asked for api-int (HostedNetServices) that found no kube-apiserver there, by reason: unreachable, tls, timeout, http-status', labelNames: ['reason'], ...opts }),
    lbSourcesDisagree: new prom.Counter({ name: 'lbdns_lb_sources_disagree_total', help: "Times an LB's addresses in the Infrastructure status differed from the ones served from its LB config, counted when each difference first appears, by LB", labelNames: ['lb'], ...opts }),
    sourceDataIgnored: new prom.Counter({ name: 'lbdns_source_data_ignored_total', help: 'Other data from cluster objects that lbdns refused, counted when each first appears, by source', labelNames: ['source'], ...opts }),
    corefileOutOfDate: new prom.Gauge({ name: 'lbdns_corefile_out_of_date', help: '1 while the Corefile on disk is not the one the sources call for (render or write failing)', registers: purpose === 'corefile' ? [registry] : [] }),
    dnsmasqOutOfDate: new prom.Gauge({ name: 'lbdns_dnsmasq_out_of_date', help: "1 while the node dnsmasq's drop-in or api-int hosts file (--dnsmasq-out) is not the one the sources call for (its write failing)", registers: purpose === 'corefile' ? [registry] : [] }),
    unresolvable: () => [],
    infraStatusInSync: new prom.Gauge({ name: 'lbdns_infrastructure_status_in_sync', help: '1 after the last publication of the LB IPs lbdns computed succeeded (or found them there), 0 while publishing them fails', registers: purpose === 'infra-status' ? [registry] : [] }),
  };
  new prom.Gauge({
    name: 'lbdns_ready',
    help: purpose === 'corefile' ? '1 while /readyz is 200: a complete Corefile is on disk and CoreDNS can take its port' : '1 while /readyz is 200: the LB IPs were published',
    registers: [registry],
    collect() {
      this.set(metrics.ready() ? 1 : 0);
    },
  });
  new prom.Gauge({
    name: 'lbdns_lb_hostnames_unresolvable',
    help: 'LB host names whose latest lookup failed, by what is served meanwhile: last_known_good addresses or nothing',
    labelNames: ['serving'],
    registers: [registry],
    collect() {
      const failing = metrics.unresolvable();
      const kept = failing.filter((f) => f.keptLastGood).length;
      this.set({ serving: 'last_known_good' }, kept);
      this.set({ serving: 'nothing' }, failing.length - kept);
    },
  });
  return metrics;
}
