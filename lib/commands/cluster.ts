import type { KubeConfig } from '@kubernetes/client-node';
import type { LbDisagreement, LocalSays } from '../sources/cluster-data.js';
import { startClusterSources, type ObjectRef, type SourcePurpose } from '../sources/cluster-sources.js';
import type { RawConfig } from '../inputs/config.js';
import { ConfigError, quote, ValidationError } from '../errors.js';
import { loadKubeConfig, pinnedAddress, pinServer } from '../kube/client.js';
import { corefileServedFor, readServedBefore } from '../sinks/served-before.js';
import { zoneFilePaths } from '../sinks/zone-file-output.js';
import { dnsmasqServedFor } from '../sinks/dnsmasq-output.js';
import { canonicalIp } from '../grammar/ip.js';
import { readClusterIdentity, type ClusterIdentity } from '../sources/cluster-identity-read.js';
import { loadRawConfig, specFromRaw } from '../inputs/local-inputs.js';
import type { Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import { EVENT_REASONS, NO_EVENTS, type EventSink, type InvolvedObject } from '../runtime/events.js';
import { LB_NAMES, ROLE_TRAITS, type ClusterSpec, type Endpoint, type LbName, type RecordSet, type Role } from '../model.js';
import { Monitor, type MonitorOptions } from '../runtime/monitor.js';
import { ApiIntGate } from '../runtime/api-int-gate.js';
import { ApiProbeError, clusterCa, probeApiServer } from '../sinks/api-int-probe.js';
import { ResolutionCache } from '../resolve/resolution-cache.js';
import { HostResolver } from '../resolve/host-resolver.js';
import { DEFAULT_LB_CONFIG } from '../sources/lb-config.js';
import { clusterDnsType, type Infrastructure } from '../sources/infra-lbs.js';
import { validateDnsName } from '../grammar/validate.js';
import type { CommandInputs } from './io.js';
import { sourceKind } from '../resolve/source-kind.js';
import type { Refusal } from '../resolve/gateway-names.js';
import { REFUSAL_REASONS } from '../resolve/gateway-claims.js';

/** Flags of every command that can read the cluster. */
export interface ClusterFlags {
  readonly kubeconfig: string | undefined;
  /** `namespace/name` of the router Service. */
  readonly ingressService: string;
  /** `namespace/name` of the LB config ConfigMap; default from the platform. */
  readonly lbConfig: string | undefined;
  readonly waitTimeoutMs: number;
  /** Serve names even on a cluster whose Infrastructure says its DNS is the cloud's (PlatformDefault). */
  readonly ignoreDnsType?: boolean;
  /** The port the API servers listen on, where a move of api-int is checked (default 6443). */
  readonly apiPort?: number;
  /**
   * --api-int-seed: where the API server is reached, by the kubeconfig's api-int name, when
   * nothing lbdns serves says yet (a node's first boot: no Corefile on disk). Never served.
   */
  readonly apiIntSeed?: readonly Endpoint[];
}

export const DEFAULT_INGRESS_SERVICE = 'openshift-ingress/router-default';

export function parseObjectRef(field: string, value: string): ObjectRef {
  const parts = value.split('/');
  if (parts.length !== 2) throw new ValidationError(field, value, 'is not NAMESPACE/NAME');
  const [namespace, name] = parts.map((p) => validateDnsName(field, p)) as [string, string];
  return { namespace, name };
}

export interface ClusterContext {
  readonly kc: KubeConfig;
  readonly raw: RawConfig;
  readonly spec: ClusterSpec;
  readonly identity: ClusterIdentity;
  readonly localSays: LocalSays;
  readonly ingressService: ObjectRef;
  readonly lbConfig: ObjectRef | undefined;
  /** What the cluster's DNS switch says, in words, for `display`; undefined off AWS, GCP and Azure. */
  readonly dnsType: string | undefined;
  readonly apiPort: number;
  /** See PrepareOptions.dnsmasqOut. */
  readonly dnsmasqOut?: string | undefined;
  /** The kubeconfig server's name, when lbdns connects to the address it serves for it (pinToServedAddress). */
  readonly pinnedName?: string | undefined;
}

export interface PrepareOptions {
  /** Whether the command serves DNS and so needs upstream resolvers (see specFromRaw). */
  readonly upstreams?: boolean;
  /** Checks the merged local config before the cluster is contacted, so a missing setting fails at once. */
  readonly check?: (raw: RawConfig) => void | Promise<void>;
  /** The node dnsmasq's drop-in this command writes: its hosts file says what api-int was served when no Corefile does. */
  readonly dnsmasqOut?: string | undefined;
}

/**
 * Off AWS, GCP, Azure and the on-prem platforms there is neither an installer LB config
 * ConfigMap nor an Infrastructure LB list or VIP, so no source can ever name api-int:
 * waiting would only end in --wait-timeout's "has no address".
 */
function unsupportedPlatform(platformType: unknown, role: Role): ConfigError {
  const flags = ROLE_TRAITS[role].serves.includes('api') ? '--api-int-lb (and --api-lb)' : '--api-int-lb';
  return new ConfigError(
    `infrastructures.config.openshift.io/cluster: platform ${quote(platformType ?? null)} is not one whose API LBs lbdns can read from the cluster (AWS, GCP, Azure; BareMetal, VSphere, OpenStack, oVirt, Nutanix), so nothing would give api-int an address; pass ${flags} (or loadBalancers in --config), or name a ConfigMap holding them with --lb-config NAMESPACE/NAME`,
  );
}

/**
 * The cluster's DNS switch, for a command that serves names: only `ClusterHosted` says the
 * cluster's names are its own to serve. `PlatformDefault`, or no value (a cluster installed
 * without the switch), leaves them to the cloud's DNS, where a Corefile from lbdns would be a
 * second, competing answer; the admin may say otherwise, once, with --ignore-dns-type. The
 * field is immutable once set, so a running monitor never sees it change.
 */
function checkDnsType(infra: Infrastructure | undefined, ignore: boolean, log: Logger): string | undefined {
  const dnsType = clusterDnsType(infra);
  if (dnsType === undefined) return undefined;
  if (dnsType.value === 'ClusterHosted') return `${dnsType.field}: ClusterHosted`;
  const is = dnsType.value === undefined ? 'is not set (an older cluster, or one installed without the switch)' : `is ${quote(dnsType.value)}`;
  if (ignore) {
    const said = `${dnsType.field} ${is}: served anyway (--ignore-dns-type)`;
    log.warn(said);
    return said;
  }
  throw new ConfigError(
    `${dnsType.field} ${is}: this cluster's names are the cloud DNS's unless the cluster was installed with ClusterHosted, so lbdns serves nothing here, where it would compete with it. Pass --ignore-dns-type if you know this cluster needs it anyway`,
  );
}

/**
 * The addresses lbdns itself serves for `host`, when the kubeconfig names one of its names:
 * from the flags or config file (api-int.*, api.*), else from the Corefile already at --out,
 * else, for api-int, from the node dnsmasq's hosts file beside `dnsmasqOut`.
 */
async function servedAddresses(host: string, raw: RawConfig, dnsmasqOut: string | undefined): Promise<{ readonly addresses: string[]; readonly from: string }> {
  const served = await servedByLbdns(host, raw);
  if (served.addresses.length > 0 || dnsmasqOut === undefined || !host.startsWith('api-int.')) return served;
  return { addresses: await dnsmasqServedFor(dnsmasqOut, '--out', host), from: dnsmasqOut };
}

async function servedByLbdns(host: string, raw: RawConfig): Promise<{ readonly addresses: string[]; readonly from: string }> {
  const local = host.startsWith('api-int.') ? raw.loadBalancers?.apiInt : host.startsWith('api.') ? raw.loadBalancers?.api : undefined;
  const inDomain = raw.domain === undefined || host.endsWith(`.${raw.domain.toLowerCase().replace(/\.$/, '')}`);
  const fromFlags = inDomain ? (local ?? []).flatMap((v) => canonicalIp(v) ?? []) : [];
  if (fromFlags.length > 0) return { addresses: fromFlags, from: 'flags' };
  if (raw.out === undefined || raw.out === '-') return { addresses: [], from: '' };
  const addresses = await corefileServedFor(raw.out, host);
  return { addresses, from: addresses.length > 0 ? raw.out : '' };
}

/**
 * When the kubeconfig's server is a name this node's CoreDNS answers (the kubelet's
 * kubeconfig names api-int), asking DNS for it would need the CoreDNS lbdns is about to
 * configure: after a full cluster shutdown, nothing would ever start. lbdns then connects to
 * the address it serves for that name, the name staying the TLS server name. An IP is used as is.
 */
async function pinToServedAddress(kc: KubeConfig, raw: RawConfig, seed: readonly Endpoint[], dnsmasqOut: string | undefined, log: Logger): Promise<string | undefined> {
  const host = pinnedAddress(kc)?.toLowerCase();
  if (host === undefined || canonicalIp(host) !== null) return undefined;
  const { addresses, from } = await servedAddresses(host, raw, dnsmasqOut);
  const [address] = addresses;
  if (address !== undefined) {
    pinServer(kc, address);
    log.info('the kubeconfig names the API server by a name lbdns serves; connecting to the address served for it', { server: host, address, from, tlsServerName: host });
    return host;
  }
  if (!host.startsWith('api-int.') || seed.length === 0) return undefined;
  const seeded = await seedAddress(seed, raw);
  if (seeded === undefined) {
    log.warn('no --api-int-seed address resolves; asking DNS for the API server name', { server: host, seed: seed.map((e) => (e.kind === 'ip' ? e.ip : e.hostname)) });
    return undefined;
  }
  pinServer(kc, seeded);
  log.info('no Corefile serves api-int yet (a first boot); connecting to the API server at the --api-int-seed address', { server: host, address: seeded, tlsServerName: host });
  return host;
}

/**
 * On-prem, once what a record set serves is on disk: a kubeconfig pinned to the address served
 * for its server's name follows that name to an address it now serves, which the api-int gate
 * verified first. A move would otherwise leave the monitor asking the old address for good once
 * that path is gone. Elsewhere the addresses come from cluster data no probe checked, and a
 * typo there must not take the monitor away from the API server that could mend it. Open
 * watches stay where they are until they break.
 */
export function followServedAddress(ctx: ClusterContext, recordSet: RecordSet, log: Logger): void {
  const name = ctx.pinnedName;
  if (name === undefined || ctx.identity.onPrem === undefined) return;
  const record = recordSet.names.find((n) => n.name === name);
  const [address, ...others] = record === undefined ? [] : [...record.v4, ...record.v6];
  const current = pinnedAddress(ctx.kc);
  if (address === undefined || current === undefined || [address, ...others].includes(canonicalIp(current) ?? current)) return;
  pinServer(ctx.kc, address);
  log.info('the API server name lbdns serves has moved; connecting to its new address', { server: name, from: current, address, tlsServerName: name });
}

/** The first address of the seed: an IP as it is, a host name (the api-int LB's) through the upstreams. */
async function seedAddress(seed: readonly Endpoint[], raw: RawConfig): Promise<string | undefined> {
  for (const e of seed) {
    if (e.kind === 'ip') return e.ip;
    const resolver = new HostResolver({ servers: raw.dnsServers ?? raw.upstreams });
    const r = await resolver.resolve(e.hostname).catch(() => undefined);
    const first = r?.v4[0] ?? r?.v6[0];
    if (first !== undefined) return first;
  }
  return undefined;
}

/** Local inputs plus what the cluster says about itself (domain, platform), read once. */
export async function prepareCluster(inputs: CommandInputs, flags: ClusterFlags, log: Logger, opts: PrepareOptions = {}): Promise<ClusterContext> {
  const raw = await loadRawConfig(inputs, log);
  await opts.check?.(raw);
  const ingressService = parseObjectRef('--ingress-service', flags.ingressService);
  const explicitLbConfig = flags.lbConfig === undefined ? undefined : parseObjectRef('--lb-config', flags.lbConfig);
  const kc = await loadKubeConfig({ path: flags.kubeconfig, env: process.env });
  const pinnedName = await pinToServedAddress(kc, raw, flags.apiIntSeed ?? [], opts.dnsmasqOut, log);
  const identity = await readClusterIdentity(kc, log, Date.now() + flags.waitTimeoutMs);
  // Commands that serve no DNS (print-records, check-dns, update-infra-status) read the switch their own way, or not at all.
  const dnsType = opts.upstreams === false ? undefined : checkDnsType(identity.infrastructure, flags.ignoreDnsType === true, log);
  const domain = raw.domain ?? identity.domain;
  if (domain === undefined) {
    throw new ValidationError('--domain', undefined, 'is required: the cluster has no dnses.config.openshift.io/cluster spec.baseDomain nor an Infrastructure apiServerInternalURI to take it from', 'pass --domain');
  }
  // resolv.conf is read after the API: under --if-unreachable=keep, an API out of reach at boot keeps the Corefile whatever resolv.conf holds then.
  const spec = await specFromRaw({ ...raw, domain }, log, opts.upstreams !== false);
  const lbs = new Set(LB_NAMES.filter((lb) => spec.lbs[lb].length > 0));
  const lbConfig = explicitLbConfig ?? (identity.platform ? DEFAULT_LB_CONFIG : undefined);
  const platformType = identity.infrastructure?.status?.platformStatus?.type;
  if (identity.infrastructure !== undefined && identity.onPrem === undefined && lbConfig === undefined && ROLE_TRAITS[spec.role].serves.includes('api-int') && !lbs.has('api-int')) {
    throw unsupportedPlatform(platformType, spec.role);
  }
  if (identity.onPrem !== undefined) log.info('on-prem platform: api, api-int and *.apps come from the Infrastructure VIPs', { platform: identity.onPrem });
  else if (lbConfig === undefined) log.info('no LB config ConfigMap for this platform; api LBs come from flags and the Infrastructure status', { platform: platformType ?? 'unknown' });
  return { kc, raw, spec, identity, localSays: { lbs, nodes: raw.nodes !== undefined }, ingressService, lbConfig, dnsType, apiPort: flags.apiPort ?? DEFAULT_API_PORT, dnsmasqOut: opts.dnsmasqOut, pinnedName };
}

export interface PipelineOptions {
  readonly purpose: SourcePurpose;
  /** The LBs the command uses; sources that could only speak of others are not read. Default: all. */
  readonly wanted?: ReadonlySet<LbName>;
  /** See ClusterSourceOptions.watchPublished. */
  readonly watchPublished?: boolean;
  /** Names that must have addresses before the first state reaches the sink; default: the role's. */
  readonly required?: (spec: ClusterSpec) => string[];
  /** See MonitorOptions.check. */
  readonly check?: MonitorOptions['check'];
  readonly log: Logger;
  readonly metrics?: Metrics;
  readonly events?: EventSink;
  /** Asked at each resolution when a function: the servers follow resolv.conf. */
  readonly dnsServers: readonly string[] | (() => readonly string[] | undefined) | undefined;
  readonly sink: MonitorOptions['sink'];
  /** See MonitorOptions.oneShot. */
  readonly oneShot?: boolean;
}

/**
 * Why a source warning refused a DNS name an object asked for, as a metric label in the words
 * Gateway DNS refusals use (gateway-claims.ts); undefined when it refused other data. Names
 * are the fields ending in dnsName or hostname(s); a claim the source refused says which
 * (NameClaim), any other refusal of a name is of its syntax.
 */
function nameRefusal(fields: Readonly<Record<string, unknown>>): (typeof INGRESS_REFUSALS)[number] | undefined {
  const where = typeof fields.where === 'string' ? fields.where : '';
  if (!/(dnsName|hostnames?)(\[\d+\])?$/.test(where)) return undefined;
  return INGRESS_REFUSALS.find((r) => r === fields.refusal) ?? 'invalid';
}

/** The reasons nameRefusal gives. */
const INGRESS_REFUSALS = ['outside-domain', 'api-name', 'invalid'] as const;

/** The kube-apiserver's own port: where a move of api-int is checked. */
const DEFAULT_API_PORT = 6443;

async function apiIntGate(ctx: ClusterContext, log: Logger, schedule: () => void, metrics: Metrics | undefined): Promise<ApiIntGate> {
  const ca = await clusterCa(ctx.kc);
  const serverName = `api-int.${ctx.spec.domain}`;
  const port = ctx.apiPort;
  const servedBefore = (await servedAddresses(serverName, { ...ctx.raw, loadBalancers: {} }, ctx.dnsmasqOut)).addresses;
  return new ApiIntGate({
    servedBefore: servedBefore.length === 1 ? servedBefore[0] : undefined,
    probe: (ip) =>
      ca === undefined
        ? Promise.reject(new ApiProbeError('tls', `the kubeconfig names no cluster CA to verify ${serverName} with, so no move of api-int can be checked`))
        : probeApiServer({ ip, port, serverName, ca, timeoutMs: 3000 }),
    log,
    onSwitch: schedule,
    onFailure: (reason, first) => {
      metrics?.apiIntMoveFailures.inc({ reason });
      // The first failure settles the move for now: a one-shot command waiting on it goes on (Monitor.whenComplete).
      if (first) schedule();
    },
  });
}

/** Sources → resolutions → monitor, wired; the caller decides the sink and when to stop. */
export async function startPipeline(ctx: ClusterContext, opts: PipelineOptions): Promise<Monitor> {
  const { log, metrics } = opts;
  const events = opts.events ?? NO_EVENTS;
  let monitor: Monitor | undefined;
  const schedule = () => monitor?.schedule();
  const resolver = new HostResolver({ servers: opts.dnsServers });
  const resolutions = new ResolutionCache({
    resolver,
    onChange: (hostname, before, after) => {
      log.info('LB hostname answer changed', { hostname, from: before ? [...before.v4, ...before.v6] : [], to: after ? [...after.v4, ...after.v6] : [] });
      schedule();
    },
    onFailure: (hostname, error, keptLastGood, retryInSeconds) => {
      metrics?.resolveFailures.inc({ reason: error.reason });
      events.emit({
        type: 'Warning',
        reason: EVENT_REASONS.hostUnresolvable,
        message: `LB host name ${hostname} does not resolve (${error.reason}); ${keptLastGood ? 'serving its last known good addresses' : 'its LB has no address from it'}`,
      });
      log.warn(keptLastGood ? 'resolving an LB hostname failed; serving its last known good addresses' : 'resolving an LB hostname failed', { hostname, reason: error.reason, error: error.message, retryInSeconds });
    },
  });
  const sources = await startClusterSources({
    kc: ctx.kc,
    oneShot: opts.oneShot === true,
    role: ctx.spec.role,
    domain: ctx.spec.domain,
    ttl: ctx.spec.ttl,
    purpose: opts.purpose,
    wanted: opts.wanted ?? new Set(LB_NAMES),
    watchPublished: opts.watchPublished === true,
    ingressService: ctx.ingressService,
    lbConfig: ctx.lbConfig,
    onPrem: ctx.identity.onPrem !== undefined,
    localSays: ctx.localSays,
    ...(ctx.spec.gateway ? { gatewayZones: ctx.spec.gateway.zones, gatewayTtls: ctx.spec.gateway.ttls } : {}),
    log,
    onChange: schedule,
    // Every series from 0, before the first list can count: one first exported at its first count, 1, gives the alerts' increase() nothing to see.
    onStarting: (names) => {
      if (metrics === undefined) return;
      for (const source of names) metrics.watchRestarts.inc({ source }, 0);
      if (names.some((s) => s.startsWith('dnsrecords in '))) for (const reason of INGRESS_REFUSALS) metrics.namesRefused.inc({ source: 'dnsrecords', reason }, 0);
      if (ctx.spec.gateway) {
        for (const source of ['dnspolicy', 'dnsrecord.kuadrant.io']) for (const reason of REFUSAL_REASONS) metrics.namesRefused.inc({ source, reason }, 0);
        metrics.namesRefused.inc({ source: 'gateway', reason: 'invalid' }, 0);
      }
    },
    onWarning: (warning) => {
      const refusal = nameRefusal(warning.fields);
      if (warning.fresh) {
        if (refusal) metrics?.namesRefused.inc({ source: warning.source.split(' ')[0] ?? warning.source, reason: refusal });
        else metrics?.sourceDataIgnored.inc({ source: warning.source });
      }
      const regarding = warning.fields.regarding as InvolvedObject | undefined;
      events.emit({ type: 'Warning', reason: refusal ? EVENT_REASONS.nameRefused : EVENT_REASONS.sourceIgnored, message: `${warning.source}: ${warning.msg}`, ...(regarding ? { regarding } : {}) });
    },
    onRestart: (source, error) => {
      metrics?.watchRestarts.inc({ source });
      events.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: `watching ${source} failed; retrying with the data kept: ${error.message}` });
      monitor?.sourceFailed();
    },
  });
  if (metrics) {
    // A host name that never answered since the start still serves its last known good where its name is held from the files on disk.
    metrics.unresolvable = () => {
      const held = monitor?.heldHostnames() ?? new Set<string>();
      return resolutions.failing().map((f) => ({ keptLastGood: f.keptLastGood || held.has(f.hostname) }));
    };
  }
  const onDisagreement = (d: LbDisagreement): void => {
    metrics?.lbSourcesDisagree.inc({ lb: d.lb });
    events.emit({
      type: 'Warning',
      reason: EVENT_REASONS.sourceIgnored,
      message: `the Infrastructure status publishes ${d.published.join(', ')} for the ${d.lb} LB, which is served as ${d.served.join(', ')} from its LB config; the status is stale or the LB config wrong`,
    });
  };
  const onRefused = (r: Refusal): void => {
    metrics?.namesRefused.inc({ source: sourceKind(r.source), reason: r.reason });
    events.emit({ type: 'Warning', reason: EVENT_REASONS.nameRefused, message: `${r.source}: ${r.name} ${r.detail}; not served (${r.reason})`, ...(r.regarding ? { regarding: r.regarding } : {}) });
  };
  const apiInt = ctx.identity.onPrem !== undefined ? await apiIntGate(ctx, log, schedule, metrics) : undefined;
  const out = ctx.raw.out;
  const servedBefore = out === undefined || out === '-' ? [] : await readServedBefore(out, zoneFilePaths(out, ctx.spec.gateway?.zones ?? []));
  monitor = new Monitor({ local: ctx.spec, servedBefore, ...(apiInt ? { apiInt } : {}), localSays: ctx.localSays, sources, resolutions, log, sink: opts.sink, oneShot: opts.oneShot === true, onDisagreement, onRefused, ...(opts.required ? { required: opts.required } : {}), ...(opts.check ? { check: opts.check } : {}) });
  monitor.schedule();
  return monitor;
}
