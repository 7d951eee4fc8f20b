import { lbResolvers, loadLocalInputs } from '../inputs/local-inputs.js';
import { exampleGatewayObjects } from '../inputs/example.js';
import { GatewayInputs } from '../sources/gateway-sources.js';
import type { ApiIntRollout } from '../sources/hosted-net-services.js';
import type { Logger } from '../runtime/log.js';
import type { RawConfig } from '../inputs/config.js';
import type { ClusterSpec, ExtraRecord, LbName, RecordSet, Resolution } from '../model.js';
import { buildRecordSet, whyNotServed, type RecordSetResult } from '../resolve/record-set.js';
import { requiredNames } from '../runtime/monitor.js';
import { resolveAll } from '../resolve/gather.js';
import { HostResolver } from '../resolve/host-resolver.js';
import { requireLbs } from '../inputs/spec.js';
import { prepareCluster, startPipeline, type ClusterFlags, type PrepareOptions } from './cluster.js';
import type { CommandInputs } from './io.js';

/** What a one-shot command computed: the same shape from flags alone or from the cluster. */
export interface OneShotState {
  readonly raw: RawConfig;
  readonly spec: ClusterSpec;
  readonly resolutions: ReadonlyMap<string, Resolution>;
  readonly recordSet: RecordSet;
  readonly empty: readonly string[];
  readonly unmanaged: readonly ExtraRecord[];
  readonly withheld: readonly { readonly name: string; readonly reason: string }[];
  /** What the cluster's DNS switch says (see ClusterContext.dnsType); undefined without a cluster or off AWS, GCP and Azure. */
  readonly dnsType?: string | undefined;
  readonly gateway: RecordSetResult['gateway'];
  readonly notes: RecordSetResult['notes'];
  readonly apiIntRollout?: ApiIntRollout;
}

/**
 * Flags and files only: every LB the role needs must be given, every hostname must
 * resolve. With a cluster: its sources are read once, waiting up to --wait-timeout for
 * the role's required names, then everything stops.
 */
export interface GatherOptions extends PrepareOptions {
  /** The LBs the command needs addresses of (print-records and check-dns: those of --names); default the role's. */
  readonly needs?: readonly LbName[];
}

export async function gatherOnce(inputs: CommandInputs, cluster: ClusterFlags | undefined, log: Logger, opts: GatherOptions = {}): Promise<OneShotState> {
  if (cluster === undefined) {
    const local = await loadLocalInputs(inputs, log, opts.upstreams !== false);
    const { raw } = local;
    await opts.check?.(raw);
    const spec = inputs.example ? withExampleGateways(local.spec, log) : local.spec;
    requireLbs(spec, opts.needs);
    const resolutions = await resolveAll(spec, new HostResolver({ servers: lbResolvers(raw, spec) }));
    const built = buildRecordSet(spec, resolutions);
    logNotServed(log, spec, built);
    return { raw, spec, resolutions, ...built, unmanaged: [] };
  }
  // One --wait-timeout for the whole command, not one for reading the cluster and another for the data.
  const deadline = Date.now() + cluster.waitTimeoutMs;
  const ctx = await prepareCluster(inputs, cluster, log, opts);
  const { needs } = opts;
  const required = needs === undefined ? undefined : (spec: ClusterSpec) => requiredNames(spec, needs);
  const monitor = await startPipeline(ctx, { purpose: 'corefile', log, dnsServers: lbResolvers(ctx.raw, ctx.spec), sink: async () => undefined, oneShot: true, ...(required ? { required } : {}) });
  try {
    const state = await monitor.whenComplete(Math.max(0, deadline - Date.now()));
    logNotServed(log, state.spec, state);
    return { raw: ctx.raw, ...state, dnsType: ctx.dnsType };
  } finally {
    await monitor.stop();
  }
}

/** The example cluster with Gateway DNS asked for: its example Gateways and DNSPolicies, built as from a cluster. */
function withExampleGateways(spec: ClusterSpec, log: Logger): ClusterSpec {
  const gateway = spec.gateway;
  if (gateway === undefined) return spec;
  const objects = exampleGatewayObjects(gateway.zones[0] as string);
  const inputs = new GatewayInputs(gateway.zones, { warn: (msg, fields) => log.warn(msg, fields), flush: () => undefined }, gateway.ttls);
  inputs.set('cluster-id', objects.clusterId);
  inputs.set('gateways', objects.gateways);
  inputs.set('dnspolicies', objects.dnspolicies);
  return { ...spec, gateway: { ...gateway, owners: inputs.contribution().gatewayOwners ?? [] } };
}

function logNotServed(log: Logger, spec: ClusterSpec, result: Pick<RecordSetResult, 'empty' | 'gateway' | 'notes'>): void {
  for (const { name, note } of result.notes) log.info(`${name}: ${note}`, { name });
  if (result.empty.length > 0) log.info('not served: their queries go upstream', { notServed: whyNotServed(spec, result) });
}
