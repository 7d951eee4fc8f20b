import type { ClusterSpec, Endpoint, ExtraRecord, LbName, NodeApiInt, NodeEntry, OwnedEndpoints, Servable, VipOwners } from '../model.js';
import { LB_NAMES } from '../model.js';

/**
 * What one cluster source says, already sanitised: every endpoint valid, every name a
 * DNS name, no duplicates. A field a source does not speak about is absent.
 */
export interface SourceContribution {
  readonly lbs?: Partial<Record<LbName, readonly Endpoint[]>>;
  /**
   * LB addresses a status publishes (the Infrastructure's `clusterHosted` lists): a copy,
   * possibly old, so served only for an LB no source names in `lbs` and no flag gives.
   */
  readonly publishedLbs?: Partial<Record<LbName, readonly Endpoint[]>>;
  readonly extraRecords?: readonly ExtraRecord[];
  /** Unmanaged DNSRecords: left to the admin, reported, never served. */
  readonly unmanaged?: readonly ExtraRecord[];
  readonly nodes?: readonly NodeEntry[];
  /** What the cluster says not to serve, and why. */
  readonly withheld?: Readonly<Partial<Record<Servable, string>>>;
  /** See ClusterSpec.refusedLbs: entries there, every one refused. */
  readonly refusedLbs?: Readonly<Partial<Record<LbName, string>>>;
  /** The address api-int should move to (HostedNetServices), served once verified. */
  readonly apiIntAddress?: string;
  /** What each node's monitor reports its CoreDNS answers for api-int (HostedNetServices status); absent without the object. */
  readonly apiIntReported?: readonly NodeApiInt[];
  /** The VIP owners the HostedNetServices status names; absent without the object. */
  readonly vipOwners?: VipOwners;
  /** The HostedNetServices object's metadata.generation: which spec the api-int state describes. */
  readonly switchesGeneration?: number;
  /** Gateway DNS: the endpoints each Kuadrant DNSRecord or DNSPolicy asks for, not yet confined. */
  readonly gatewayOwners?: readonly OwnedEndpoints[];
}

/** Everything the cluster says, merged from all sources. */
export interface ClusterData {
  readonly lbs: Readonly<Record<LbName, readonly Endpoint[]>>;
  /** Published addresses of LBs that a source names: not served, compared with what is (see LbDisagreement). */
  readonly shadowed?: Readonly<Partial<Record<LbName, readonly Endpoint[]>>>;
  /** The LBs `lbs` holds a published copy for, no source naming them. */
  readonly publishedOnly?: readonly LbName[];
  readonly extraRecords: readonly ExtraRecord[];
  readonly unmanaged: readonly ExtraRecord[];
  readonly nodes: readonly NodeEntry[] | undefined;
  readonly withheld?: Readonly<Partial<Record<Servable, string>>>;
  /** LBs no source names with a valid entry, and one named with entries all refused. */
  readonly refusedLbs?: Readonly<Partial<Record<LbName, string>>>;
  /** See SourceContribution.apiIntAddress. */
  readonly apiIntAddress?: string;
  /** See SourceContribution.apiIntReported. */
  readonly apiIntReported?: readonly NodeApiInt[];
  /** See SourceContribution.vipOwners. */
  readonly vipOwners?: VipOwners;
  /** See SourceContribution.switchesGeneration. */
  readonly switchesGeneration?: number;
  readonly gatewayOwners?: readonly OwnedEndpoints[];
}

function uniqueEndpoints(endpoints: readonly Endpoint[]): Endpoint[] {
  const seen = new Set<string>();
  return endpoints.filter((e) => {
    const key = e.kind === 'ip' ? e.ip : e.hostname;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/**
 * One truth per LB: the sources that name it (the LB config ConfigMap, the router Service, the
 * on-prem VIPs), their union in source order; only for an LB none of them names, the
 * published copy. A published copy beside a naming source is kept aside as `shadowed`.
 */
export function mergeContributions(contributions: readonly SourceContribution[]): ClusterData {
  const named = (lb: LbName) => uniqueEndpoints(contributions.flatMap((c) => c.lbs?.[lb] ?? []));
  const published = (lb: LbName) => uniqueEndpoints(contributions.flatMap((c) => c.publishedLbs?.[lb] ?? []));
  const lbs = Object.fromEntries(LB_NAMES.map((lb) => [lb, named(lb).length > 0 ? named(lb) : published(lb)])) as Record<LbName, Endpoint[]>;
  const shadowed = Object.fromEntries(LB_NAMES.flatMap((lb) => (named(lb).length > 0 && published(lb).length > 0 ? [[lb, published(lb)]] : []))) as Partial<Record<LbName, Endpoint[]>>;
  const publishedOnly = LB_NAMES.filter((lb) => named(lb).length === 0 && published(lb).length > 0);
  const withNodes = contributions.filter((c) => c.nodes !== undefined);
  const refusedLbs = Object.fromEntries(LB_NAMES.flatMap((lb) => {
    const why = contributions.find((c) => c.refusedLbs?.[lb] !== undefined)?.refusedLbs?.[lb];
    return why !== undefined && lbs[lb].length === 0 ? [[lb, why]] : [];
  })) as Partial<Record<LbName, string>>;
  return {
    lbs,
    shadowed,
    publishedOnly,
    extraRecords: contributions.flatMap((c) => c.extraRecords ?? []),
    unmanaged: contributions.flatMap((c) => c.unmanaged ?? []),
    nodes: withNodes.length === 0 ? undefined : withNodes.flatMap((c) => c.nodes ?? []),
    withheld: Object.assign({}, ...contributions.map((c) => c.withheld ?? {})) as Partial<Record<Servable, string>>,
    ...(Object.keys(refusedLbs).length > 0 ? { refusedLbs } : {}),
    ...Object.fromEntries(contributions.filter((c) => c.apiIntAddress !== undefined).slice(0, 1).map((c) => ['apiIntAddress', c.apiIntAddress])),
    ...Object.fromEntries(contributions.filter((c) => c.apiIntReported !== undefined).slice(0, 1).map((c) => ['apiIntReported', c.apiIntReported])),
    ...Object.fromEntries(contributions.filter((c) => c.vipOwners !== undefined).slice(0, 1).map((c) => ['vipOwners', c.vipOwners])),
    ...Object.fromEntries(contributions.filter((c) => c.switchesGeneration !== undefined).slice(0, 1).map((c) => ['switchesGeneration', c.switchesGeneration])),
    gatewayOwners: contributions.flatMap((c) => c.gatewayOwners ?? []),
  };
}

/** Which LB lists and whether the nodes were given by flags or the config file. */
export interface LocalSays {
  readonly lbs: ReadonlySet<LbName>;
  readonly nodes: boolean;
}

/**
 * An LB whose published addresses differ from the ones served for it: the status is stale or
 * the LB config wrong; either way an admin should know. Only when the served ones are known.
 */
export interface LbDisagreement {
  readonly lb: LbName;
  readonly served: readonly string[];
  readonly published: readonly string[];
}

/**
 * The published lists that disagree with what is served, whether a source or a flag names
 * the LB; `served` gives an LB's current addresses.
 */
export function lbDisagreements(cluster: ClusterData, localSays: LocalSays, served: (lb: LbName) => readonly string[]): LbDisagreement[] {
  return LB_NAMES.flatMap((lb) => {
    const copy = cluster.shadowed?.[lb] ?? (localSays.lbs.has(lb) && cluster.publishedOnly?.includes(lb) ? cluster.lbs[lb] : undefined);
    if (copy === undefined) return [];
    const published = [...new Set(copy.map((e) => (e.kind === 'ip' ? e.ip : e.hostname)))].sort();
    const now = [...new Set(served(lb))].sort();
    if (now.length === 0 || (now.length === published.length && now.every((ip, i) => ip === published[i]))) return [];
    return [{ lb, served: now, published }];
  });
}

/**
 * Flags and config file win where they say something: an LB list given locally replaces
 * the cluster's, local nodes replace the cluster's nodes, and what they give is served even
 * where the cluster withholds its own.
 */
export function applyClusterData(local: ClusterSpec, cluster: ClusterData, localSays: LocalSays): ClusterSpec {
  const lbs = Object.fromEntries(LB_NAMES.map((lb) => [lb, localSays.lbs.has(lb) ? local.lbs[lb] : cluster.lbs[lb]])) as Record<LbName, readonly Endpoint[]>;
  const withheld = Object.fromEntries(
    Object.entries(cluster.withheld ?? {}).filter(([what]) => (what === 'nodes' ? !localSays.nodes : !localSays.lbs.has(what as LbName))),
  ) as Partial<Record<Servable, string>>;
  return {
    ...local,
    lbs,
    extraRecords: [...local.extraRecords, ...cluster.extraRecords],
    nodes: localSays.nodes ? local.nodes : (cluster.nodes ?? []),
    ...(Object.keys(withheld).length > 0 ? { withheld } : {}),
    ...refusedOf(cluster, localSays),
    ...(local.gateway ? { gateway: { ...local.gateway, owners: cluster.gatewayOwners ?? [] } } : {}),
  };
}

/** The cluster's refused LBs that no flag replaces. */
function refusedOf(cluster: ClusterData, localSays: LocalSays): { refusedLbs?: Partial<Record<LbName, string>> } {
  const refusedLbs = Object.fromEntries(Object.entries(cluster.refusedLbs ?? {}).filter(([lb]) => !localSays.lbs.has(lb as LbName))) as Partial<Record<LbName, string>>;
  return Object.keys(refusedLbs).length > 0 ? { refusedLbs } : {};
}
