import { Backoff } from '../kube/backoff.js';
import { writeDnsmasq } from '../sinks/dnsmasq-output.js';
import { ConfigError, EXIT, KubeAccessError } from '../errors.js';
import { startHealthServer } from '../runtime/health-server.js';
import { DEFAULT_RESOLV_CONF, lbResolvers, specFromRaw } from '../inputs/local-inputs.js';
import { createMetrics } from '../runtime/metrics.js';
import { EVENT_REASONS, podEventSink } from '../runtime/events.js';
import { PortGuard } from '../runtime/port-guard.js';
import { DEFAULTS, type Endpoint, type RecordSet } from '../model.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../runtime/log.js';
import { localAddresses, publishVipOwners, type VipView } from '../sinks/vip-owner-status.js';
import type { RawConfig } from '../inputs/config.js';
import type { DesiredState, Monitor } from '../runtime/monitor.js';
import type { ApiIntGate } from '../runtime/api-int-gate.js';
import { recordChanges } from '../resolve/record-changes.js';
import { whyNotServed } from '../resolve/record-set.js';
import { renderCorefile } from '../render/corefile.js';
import { checkCorefileOutputs, checkLocalOutputs, writeCorefileFiles, type LoadedTemplate } from '../sinks/corefile-output.js';
import { weightFilePath } from '../sinks/weight-file-output.js';
import { zoneFilePaths } from '../sinks/zone-file-output.js';
import { renderZones } from '../render/zone-file.js';
import { watchFile } from '../inputs/watch-file.js';
import { followServedAddress, prepareCluster, startPipeline, type ClusterFlags } from './cluster.js';
import { inputFiles, loggerFor, type CommandInputs, type LongRunningOptions } from './io.js';
import { untilStopped, type Stop } from '../runtime/stop.js';

export interface WatchLbStatusOptions extends CommandInputs, LongRunningOptions {
  readonly cluster: ClusterFlags;
  /** Also keep the node dnsmasq's drop-in there (see renderDnsmasq). */
  readonly dnsmasqOut?: string | undefined;
  /** This node's name, for the VIP owners on-prem; default the NODE_NAME environment variable. */
  readonly nodeName?: string | undefined;
}

/** How often the monitor looks whether another DNS server holds CoreDNS's port (twice in a row makes a conflict). */
const PORT_CHECK_MS = 5000;

/** Interfaces change without an API event: how often a node looks again whether it holds a VIP. */
const VIP_CHECK_MS = 30_000;

const WRITE_RETRY = { minMs: 1000, maxMs: 60_000 };
/** The longest a Node timer takes: "wait for the first complete state, however long". */
const FOREVER_MS = 2 ** 31 - 1;

/**
 * On-prem: records this node in HostedNetServices status as the owner of the VIPs its
 * interfaces hold, after each state written and every VIP_CHECK_MS, writing only when its view
 * changed or the status read lacks it; a failed write is tried again at the next look.
 */
function vipOwnerReporter(kc: KubeConfig, nodeName: string, log: Logger, apiInt: () => ReturnType<ApiIntGate['report']> | undefined) {
  let last: DesiredState | undefined;
  let reported: string | undefined;
  let mendedAt = 0;
  let busy = false;
  const look = async () => {
    if (last === undefined || busy) return;
    const local = localAddresses();
    const holds = (eps: readonly Endpoint[]) => eps.some((e) => e.kind === 'ip' && local.has(e.ip));
    const served = apiInt();
    const apiIntRecord = last.recordSet.names.find((n) => n.name === `api-int.${last?.spec.domain}`);
    const apiIntServes = apiIntRecord === undefined ? '' : [...apiIntRecord.v4, ...apiIntRecord.v6].join(',');
    const holdsApiVip = holds(last.spec.lbs.api);
    // Where no node holds the API VIP (the VIP fields name a UserManaged LB), the first Node by name writes the conditions.
    const writesConditions = !holdsApiVip && last.vipOwners?.api === undefined && last.apiIntRollout?.nodes[0]?.name === nodeName;
    const rollout = holdsApiVip || writesConditions ? last.apiIntRollout : undefined;
    const view: VipView = { nodeName, holdsApiVip, holdsIngressVip: holds(last.spec.lbs.ingress), apiIntServes, ...(writesConditions ? { writesConditions } : {}), ...(served ? { apiInt: served } : {}), ...(rollout ? { rollout } : {}), ...(last.switchesGeneration === undefined ? {} : { generation: last.switchesGeneration }) };
    const key = JSON.stringify(view);
    // The object's status as last read, not only what this node wrote, decides: an entry lost
    // since (the object replaced, the list edited) is written again.
    // The owner fields too: another node that held a VIP a moment beside this one may have cleared them after this node wrote.
    const owners = last.vipOwners;
    const ownersRecorded = owners === undefined || ((!view.holdsApiVip || owners.api === nodeName) && (!view.holdsIngressVip || owners.ingress === nodeName));
    const recorded = ownersRecorded && (last.apiIntReported === undefined || last.apiIntReported.some((n) => n.name === nodeName && n.apiIntServes === apiIntServes));
    if (key === reported && recorded) return;
    // A status that keeps losing the entry (another writer, a CRD without the field) is mended once a look, not on every event.
    const mending = key === reported;
    if (mending && Date.now() - mendedAt < VIP_CHECK_MS) return;
    if (mending) mendedAt = Date.now();
    busy = true;
    try {
      const outcome = await publishVipOwners(kc, view);
      // A status read before this node's own write had arrived is not a loss: it spends nothing.
      if (mending && outcome === 'unchanged') mendedAt = 0;
      if (outcome === 'written') log.info('HostedNetServices status updated', { node: nodeName, holdsApiVip: view.holdsApiVip, holdsIngressVip: view.holdsIngressVip, apiIntServes });
      if (outcome !== 'no-object') reported = key;
    } catch (err) {
      log.warn('recording the VIP owners in HostedNetServices status failed; trying again', { error: (err as Error).message });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), VIP_CHECK_MS);
  timer.unref();
  return {
    check: (state: DesiredState) => {
      last = state;
      void look();
    },
    stop: () => clearInterval(timer),
  };
}

/** Keeps the Corefile equal to what the cluster and DNS say, until SIGTERM. */
export async function watchLbStatusCommand(opts: WatchLbStatusOptions): Promise<number> {
  const stop = untilStopped(opts.signal);
  try {
    return await watch(opts, stop);
  } finally {
    stop.dispose();
  }
}

async function watch(opts: WatchLbStatusOptions, stop: Stop): Promise<number> {
  const log = loggerFor(opts.io);
  const metrics = await createMetrics('corefile');
  // Read with the other local inputs, before the cluster is waited for (prepareCluster's check).
  let template: LoadedTemplate | undefined;
  const requireOut = (raw: RawConfig): string => {
    if (raw.out === undefined || raw.out === '-') throw new ConfigError('--out is required: the Corefile path CoreDNS reads (e.g. /etc/coredns/Corefile)');
    return raw.out;
  };
  let withheld: DesiredState['withheld'] = [];
  // Ready means a complete Corefile is on disk, not merely that a state was computed.
  let onDisk = false;
  let waitingSince: string | undefined = new Date().toISOString();
  let started: Monitor | undefined;
  let vipOwners: ReturnType<typeof vipOwnerReporter> | undefined;
  let portGuard: PortGuard | undefined;
  const detail = () =>
    waitingSince !== undefined
      ? [`waiting for the API server since ${waitingSince}; the Corefile on disk, if any, is served as it is`]
      : [...(portGuard?.conflict() ? [portGuard.conflict() as string] : []), ...withheld.map((w) => `not served (forwarded upstream): ${w.name}: ${w.reason}`), ...(started?.apiInt ? [started.apiInt.describe()] : [])];
  const ready = () => onDisk && portGuard?.conflict() === undefined;
  // Up before the cluster is read: on a cold cluster the probes see a live, not yet ready monitor.
  const health = await startHealthServer(opts.metricsAddr, metrics, ready, 'no complete Corefile written yet, or CoreDNS cannot take its port', detail);
  opts.onListening?.(health.address);
  // The monitor waits for the API server as long as it takes: after a full cluster shutdown
  // it is the one that must be there when the API comes back, and exiting would only restart it.
  const ctx = await stop.unlessStopped(prepareCluster(opts, { ...opts.cluster, waitTimeoutMs: FOREVER_MS }, log, { check: async (raw) => void (template = await checkLocalOutputs(raw, requireOut(raw), opts.dnsmasqOut, inputFiles(opts, raw, opts.cluster))) })).catch(async (err: unknown) => {
    await health.close();
    throw err;
  });
  if (ctx === undefined) {
    await health.close();
    log.info('stopping', { why: 'stopped while waiting for the cluster' });
    return EXIT.ok;
  }
  waitingSince = undefined;
  const out = requireOut(ctx.raw);
  const corefileTemplate = template as LoadedTemplate;
  let lbServers = lbResolvers(ctx.raw, ctx.spec);
  // Refused at start (exit 2), the health server closed: nothing else is running yet.
  const { gatewayFiles } = await (async () => {
    const files = ctx.spec.gateway ? { weightFile: weightFilePath(out), zoneFiles: zoneFilePaths(out, ctx.spec.gateway.zones) } : undefined;
    await checkCorefileOutputs(out, files, opts.dnsmasqOut);
    return { gatewayFiles: files };
  })().catch(async (err: unknown) => {
    await health.close();
    throw err;
  });
  const events = podEventSink(ctx.kc, log);
  portGuard = new PortGuard({
    healthUrl: `http://127.0.0.1:${ctx.spec.healthPort ?? DEFAULTS.healthPort}/health`,
    listen: ctx.spec.listen ?? DEFAULTS.listen,
    intervalMs: PORT_CHECK_MS,
    onChange: (conflict) => {
      if (conflict === undefined) {
        log.info('CoreDNS port conflict over');
        return;
      }
      log.error(conflict, { listen: ctx.spec.listen ?? DEFAULTS.listen });
      events.emit({ type: 'Warning', reason: EVENT_REASONS.portInUse, message: conflict });
    },
  });
  portGuard.start();

  let lastSet: RecordSet | undefined;
  const writeRetry = new Backoff(() => started?.schedule(), WRITE_RETRY);
  const sink = async (state: DesiredState): Promise<boolean> => {
    writeRetry.cancel();
    const recordSet = gatewayFiles ? { ...state.recordSet, ...gatewayFiles } : state.recordSet;
    let text: string;
    let zones: ReadonlyMap<string, string>;
    try {
      text = renderCorefile(recordSet, corefileTemplate.text, corefileTemplate.source);
      zones = renderZones(recordSet);
    } catch (err) {
      metrics.renders.inc({ result: 'failed' });
      metrics.corefileOutOfDate.set(1);
      log.error('render failed; the Corefile on disk is kept', { error: (err as Error).message });
      return false;
    }
    let written: boolean;
    let dataWritten: boolean;
    try {
      ({ corefile: written, data: dataWritten } = await writeCorefileFiles(out, text, recordSet, zones));
    } catch (err) {
      metrics.renders.inc({ result: 'failed' });
      metrics.corefileOutOfDate.set(1);
      log.error('writing the Corefile failed; the previous file is intact; retrying', { error: (err as Error).message, retryInMs: writeRetry.failed() });
      return false;
    }
    // The Corefile, which holds the set, is on disk: what is served is counted, and the monitor is ready, whatever becomes of the drop-in.
    metrics.recordsServed.set({ kind: 'lb' }, state.totals.addresses);
    if (state.spec.gateway !== undefined) metrics.recordsServed.set({ kind: 'gateway' }, state.totals.gatewayAddresses);
    metrics.recordsServed.set({ kind: 'node' }, state.recordSet.nodes.reduce((n, r) => n + r.v4.length + r.v6.length, 0));
    metrics.namesServed.reset();
    for (const [source, count] of state.totals.names) metrics.namesServed.set({ source }, count);
    metrics.corefileOutOfDate.set(0);
    metrics.renders.inc({ result: written || dataWritten ? 'written' : 'unchanged' });
    if (written || dataWritten) {
      metrics.lastChange.set(Date.now() / 1000);
      // A change of Gateway addresses or weights alone rewrites their files only: CoreDNS is not reloaded.
      // The first write of this process has nothing of its own to compare with: the files it replaced are said to be, not listed as all new.
      const what = lastSet === undefined ? { firstSinceStart: true, names: state.recordSet.names.length, nodes: state.recordSet.nodes.length } : recordChanges(lastSet, state.recordSet);
      log.info(written ? 'Corefile written' : 'Gateway zone and weight files written', { path: out, ...what, notServed: whyNotServed(state.spec, state), ...(state.notes.length > 0 ? { notes: state.notes } : {}) });
    }
    lastSet = state.recordSet;
    withheld = state.withheld;
    onDisk = true;
    if (opts.dnsmasqOut !== undefined) {
      // After the Corefile: dnsmasq sends the cluster's names to a CoreDNS that must already serve them.
      try {
        const drop = await writeDnsmasq(opts.dnsmasqOut, state.recordSet, state.withheld, '--dnsmasq-out');
        if (drop.dropIn.written) log.info('dnsmasq drop-in written', { path: drop.dropIn.path });
        if (drop.hosts.written) log.info("dnsmasq's api-int hosts file written", { path: drop.hosts.path });
        metrics.dnsmasqOutOfDate.set(0);
      } catch (err) {
        metrics.dnsmasqOutOfDate.set(1);
        log.error('writing the dnsmasq drop-in failed; the previous file is intact; retrying', { error: (err as Error).message, retryInMs: writeRetry.failed() });
        return true;
      }
    }
    // Only once dnsmasq's hosts file holds it too: on-prem it is the node's api-int answer, and an
    // admin removes the old path once every node reports the new address.
    vipOwners?.check(state);
    followServedAddress(ctx, state.recordSet, log);
    writeRetry.succeeded();
    return true;
  };

  const nodeName = opts.nodeName ?? process.env.NODE_NAME;
  if (ctx.identity.onPrem !== undefined && nodeName === undefined) log.warn('NODE_NAME is not set: this node does not record itself as a VIP owner in HostedNetServices status');
  vipOwners = ctx.identity.onPrem !== undefined && nodeName !== undefined ? vipOwnerReporter(ctx.kc, nodeName, log, () => started?.apiInt?.report()) : undefined;
  const closeStarted = async () => {
    writeRetry.cancel();
    vipOwners?.stop();
    portGuard?.stop();
    await health.close();
    await events.close();
  };
  // The first list of every source can take minutes on an API server that stopped answering.
  const starting = startPipeline(ctx, { purpose: 'corefile', log, metrics, events, dnsServers: () => lbServers, sink });
  const monitor = await stop.unlessStopped(starting).catch(async (err: unknown) => {
    await closeStarted();
    throw err;
  });
  if (monitor === undefined) {
    void starting.then((m) => m.stop(), () => undefined);
    await closeStarted();
    log.info('stopping', { why: 'stopped while the sources were starting' });
    return EXIT.ok;
  }
  started = monitor;
  log.info('watching', { out, health: health.address, role: ctx.spec.role, domain: ctx.spec.domain });

  const resolvConf = ctx.raw.upstreams === undefined ? (ctx.raw.resolvConf ?? DEFAULT_RESOLV_CONF) : undefined;
  const onResolvConf = async () => {
    try {
      const spec = await specFromRaw({ ...ctx.raw, domain: ctx.spec.domain }, log);
      // The upstreams are who lbdns asks for LB host names too, unless --dns-server names others.
      lbServers = lbResolvers(ctx.raw, spec);
      monitor.updateLocal(spec);
      log.info('resolv.conf changed; upstreams re-read', { path: resolvConf });
    } catch (err) {
      log.error('resolv.conf changed but is unusable; keeping the previous upstreams', { path: resolvConf, error: (err as Error).message });
    }
  };
  let resolvWatch: { close(): void } | undefined;
  try {
    resolvWatch = resolvConf ? watchFile(resolvConf, onResolvConf) : undefined;
  } catch (err) {
    log.warn('cannot watch resolv.conf; upstream changes need a restart', { path: resolvConf, error: (err as Error).message });
  }

  // Missing RBAC at start is a configuration error (exit 2), as for the one-shot commands;
  // once running, a revoked rule only makes the watch retry with the cache kept.
  const denied = monitor.whenComplete(FOREVER_MS).then(
    () => undefined,
    (err: unknown) => (err instanceof KubeAccessError ? err : undefined),
  );
  const deniedOrStopped = denied.then((err): Promise<string | KubeAccessError> | KubeAccessError => err ?? stop.stopped);
  const ending = await Promise.race([stop.stopped, deniedOrStopped]);
  log.info('stopping', { why: typeof ending === 'string' ? ending : ending.message });
  writeRetry.cancel();
  resolvWatch?.close();
  vipOwners?.stop();
  portGuard.stop();
  await Promise.all([monitor.stop(), health.close()]);
  // Again: a computation the stop waited for may have failed its write and asked for a retry.
  writeRetry.cancel();
  await events.close();
  if (typeof ending !== 'string') throw ending;
  return EXIT.ok;
}
