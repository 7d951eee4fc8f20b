import { parseSubset } from '../grammar/subset.js';
import { Backoff } from '../kube/backoff.js';
import { ConfigError, EXIT, UsageError, ValidationError } from '../errors.js';
import { startHealthServer } from '../runtime/health-server.js';
import { lbIpLists, partialLbs, publishTarget } from '../sinks/infra-status-plan.js';
import { STATUS_LISTS } from '../sources/infra-lbs.js';
import { publishLbIps } from '../sinks/infra-status-apply.js';
import { createMetrics, type Metrics } from '../runtime/metrics.js';
import { LB_NAMES, type ClusterSpec, type LbName, type Resolution } from '../model.js';
import type { DesiredState } from '../runtime/monitor.js';
import { lbRecordName } from '../resolve/record-set.js';
import { prepareCluster, startPipeline, type ClusterContext, type ClusterFlags } from './cluster.js';
import { everyLb, loggerFor, type CommandInputs, type LongRunningOptions } from './io.js';
import { untilStopped, type Stop } from '../runtime/stop.js';

export interface UpdateInfraStatusOptions extends CommandInputs, LongRunningOptions {
  readonly cluster: ClusterFlags;
  /** Comma-separated LBs whose lists lbdns owns: api, api-int, ingress. */
  readonly fields: string;
  readonly dryRun: boolean;
  readonly watch: boolean;
  /** --set-dns-type-cluster-hosted: the admin's go-ahead to set an unset dnsType, for good. */
  readonly setDnsType?: boolean;
}

const PUBLISH_RETRY = { minMs: 1000, maxMs: 60_000 };

export function parseFields(value: string): LbName[] {
  return parseSubset('--fields', value, LB_NAMES, 'is not a list lbdns owns');
}

/** Publishes the LB IPs into the Infrastructure status once, or keeps them current with --watch. */
export async function updateInfraStatusCommand(opts: UpdateInfraStatusOptions): Promise<number> {
  if (opts.example) throw new UsageError('--example is the built-in example cluster; its addresses must not be published into a real cluster. Give the LBs with flags or a --config file, or let the cluster say them');
  const owned = parseFields(opts.fields);
  if (!opts.watch) return publishOnce(opts, owned, await prepare(opts));
  const stop = untilStopped(opts.signal);
  // Serving /healthz before the API is read: reading it may wait out --wait-timeout (an install, an API outage), and a liveness probe must not restart the pod meanwhile.
  const metrics = await createMetrics('infra-status');
  const status = { published: false };
  const health = await startHealthServer(opts.metricsAddr, metrics, () => status.published, 'the LB IPs have not been published yet');
  opts.onListening?.(health.address);
  try {
    const ctx = await stop.unlessStopped(prepare(opts));
    return ctx === undefined ? EXIT.ok : await keepPublished(opts, owned, ctx, stop, metrics, status, health.address);
  } finally {
    await health.close();
    stop.dispose();
  }
}

async function prepare(opts: UpdateInfraStatusOptions): Promise<ClusterContext> {
  const ctx = await prepareCluster(everyLb(opts), opts.cluster, loggerFor(opts.io), { upstreams: false });
  if (ctx.identity.infrastructure === undefined) throw new ConfigError('infrastructures.config.openshift.io/cluster does not exist: is this an OpenShift cluster?');
  publishTarget(ctx.identity.infrastructure, opts.setDnsType === true);
  return ctx;
}

/** The pipeline for the owned lists, and the publication of a state. */
function wiring(opts: UpdateInfraStatusOptions, owned: readonly LbName[], ctx: ClusterContext) {
  const log = loggerFor(opts.io);
  return {
    log,
    pipeline: {
      purpose: 'infra-status',
      wanted: new Set(owned),
      required: (spec: ClusterSpec) => owned.map((lb) => lbRecordName(lb, spec.domain)),
      log,
      dnsServers: ctx.raw.dnsServers,
    } as const,
    /** One-shot: a list the status cannot take fails the command (exit 2) before anything is sent. */
    check: (spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>) => void lbIpLists(spec, resolutions, owned),
    publish: (state: DesiredState, deadline?: number) => publishLbIps(ctx.kc, lbIpLists(state.spec, state.resolutions, owned), { owned, partial: partialLbs(state.spec, state.resolutions, owned), dryRun: opts.dryRun, setDnsType: opts.setDnsType === true, log, stdout: opts.io.stdout, ...(deadline === undefined ? {} : { deadline }) }),
  };
}

async function publishOnce(opts: UpdateInfraStatusOptions, owned: readonly LbName[], ctx: ClusterContext): Promise<number> {
  const { log, pipeline, check, publish } = wiring(opts, owned, ctx);
  const deadline = Date.now() + opts.cluster.waitTimeoutMs;
  const monitor = await startPipeline(ctx, { ...pipeline, check, sink: async () => undefined });
  try {
    const { patched, plan } = await publish(await monitor.whenComplete(opts.cluster.waitTimeoutMs), deadline);
    // The lists it skipped were said one by one (publishLbIps): up to date only as to the others.
    if (!patched && plan.patch === null) log.info(plan.skipped.length === 0 ? 'Infrastructure status already up to date; nothing sent' : 'nothing to send: the lists lbdns knows the IPs of are up to date', { platform: plan.platform, ...(plan.skipped.length === 0 ? {} : { leftAlone: plan.skipped.map((lb) => STATUS_LISTS[lb]) }) });
  } finally {
    await monitor.stop();
  }
  return EXIT.ok;
}

async function keepPublished(opts: UpdateInfraStatusOptions, owned: readonly LbName[], ctx: ClusterContext, stop: Stop, metrics: Metrics, status: { published: boolean }, healthAddress: string): Promise<number> {
  const { log, pipeline, publish } = wiring(opts, owned, ctx);
  const publishRetry = new Backoff(() => monitor.schedule(), PUBLISH_RETRY);
  // A failed publish is tried again on its own: in a quiet cluster no event would come to do it.
  const sink = async (state: DesiredState) => {
    publishRetry.cancel();
    try {
      const { patched, plan } = await publish(state);
      status.published = true;
      publishRetry.succeeded();
      // --dry-run stores nothing: the status is in sync only when it already held the lists; a list left for a host name with no answer may be out of date.
      metrics.infraStatusInSync.set((patched || plan.patch === null) && plan.partial.length === 0 ? 1 : 0);
    } catch (err) {
      metrics.infraStatusInSync.set(0);
      // A list the status cannot take (over 16, or a field the API server refuses: 422) fails the same way until the LBs change, which recomputes it.
      if (err instanceof ValidationError || err instanceof ConfigError) log.error('the LB IPs cannot be published; the status keeps its previous lists until the LBs change', { error: err.message });
      else log.error('publishing the LB IPs failed; retrying', { error: (err as Error).message, retryInMs: publishRetry.failed() });
    }
  };
  const monitor = await startPipeline(ctx, { ...pipeline, metrics, sink, watchPublished: true });
  log.info('watching', { fields: owned, health: healthAddress });
  log.info('stopping', { why: await stop.stopped });
  publishRetry.cancel();
  await monitor.stop();
  return EXIT.ok;
}
