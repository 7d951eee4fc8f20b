import type { ClusterSpec, Endpoint, ExtraRecord, LbName, NodeEntry, Servable } from '../model.js';
import { LB_NAMES } from '../model.js';

/**
 * What one cluster source says, already sanitised: every endpoint valid, every name a
 * DNS name, no duplicates. A field a source does not speak about is absent.
 */
export interface SourceContribution {
  readonly lbs?: Partial<Record<LbName, readonly Endpoint[]>>;
  readonly extraRecords?: readonly ExtraRecord[];
  /** Unmanaged DNSRecords: left to the admin, reported, never served. */
  readonly unmanaged?: readonly ExtraRecord[];
  readonly nodes?: readonly NodeEntry[];
  /** What the cluster says not to serve, and why. */
  readonly withheld?: Readonly<Partial<Record<Servable, string>>>;
  /** The address api-int should move to (HostedNetServices), served once verified. */
  readonly apiIntAddress?: string;
}

/** Everything the cluster says, merged from all sources. */
export interface ClusterData {
  readonly lbs: Readonly<Record<LbName, readonly Endpoint[]>>;
  readonly extraRecords: readonly ExtraRecord[];
  readonly unmanaged: readonly ExtraRecord[];
  readonly nodes: readonly NodeEntry[] | undefined;
  readonly withheld?: Readonly<Partial<Record<Servable, string>>>;
  /** See SourceContribution.apiIntAddress. */
  readonly apiIntAddress?: string;
}

function uniqueEndpoints(endpoints: readonly Endpoint[]): Endpoint[] {
  const seen = new Set<string>();
  return endpoints.filter((e) => {
    const key = e.kind === 'ip' ? e.ip : e.hostname;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** Union per LB, in source order. */
export function mergeContributions(contributions: readonly SourceContribution[]): ClusterData {
  const lbs = Object.fromEntries(LB_NAMES.map((lb) => [lb, uniqueEndpoints(contributions.flatMap((c) => c.lbs?.[lb] ?? []))])) as Record<LbName, Endpoint[]>;
  const withNodes = contributions.filter((c) => c.nodes !== undefined);
  return {
    lbs,
    extraRecords: contributions.flatMap((c) => c.extraRecords ?? []),
    unmanaged: contributions.flatMap((c) => c.unmanaged ?? []),
    nodes: withNodes.length === 0 ? undefined : withNodes.flatMap((c) => c.nodes ?? []),
    withheld: Object.assign({}, ...contributions.map((c) => c.withheld ?? {})) as Partial<Record<Servable, string>>,
    ...Object.fromEntries(contributions.filter((c) => c.apiIntAddress !== undefined).slice(0, 1).map((c) => ['apiIntAddress', c.apiIntAddress])),
  };
}

/** Which LB lists and whether the nodes were given by flags or the config file. */
export interface LocalSays {
  readonly lbs: ReadonlySet<LbName>;
  readonly nodes: boolean;
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
  };
}
