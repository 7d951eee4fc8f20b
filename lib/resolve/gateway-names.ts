import { splitFamilies } from '../grammar/ip.js';
import { ROLE_TRAITS, type ClusterSpec, type GatewayEndpoint, type GatewaySpec, type OwnedEndpoints, type Resolution, type WeightBlock } from '../model.js';

/*
 * Gateway DNS names are asked for by tenants (a Gateway, an HTTPRoute, a DNSPolicy, a
 * Kuadrant DNSRecord), so every name is confined before it is served: to the configured zones,
 * away from the cluster's own names and from names other sources serve, and to one owner.
 */

export type RefusalReason = 'outside-zones' | 'cluster-name' | 'other-source' | 'other-owner' | 'duplicate' | 'over-limit';
export const REFUSAL_REASONS: readonly RefusalReason[] = ['outside-zones', 'cluster-name', 'other-source', 'other-owner', 'duplicate', 'over-limit'];

export interface Refusal {
  readonly name: string;
  readonly source: string;
  readonly reason: RefusalReason;
  readonly detail: string;
}

interface Claim {
  readonly endpoint: GatewayEndpoint;
  readonly owner: OwnedEndpoints;
}

export interface AcceptedGatewayNames {
  /** dnsName → the endpoints served for it, all from one namespace. */
  readonly byName: ReadonlyMap<string, readonly Claim[]>;
  readonly refused: readonly Refusal[];
  /** CNAME targets no accepted name answers: host names lbdns resolves itself. */
  readonly external: readonly string[];
}

const under = (name: string, root: string): boolean => name === root || name.endsWith(`.${root}`);
const bodyOf = (name: string): string => (name.startsWith('*.') ? name.slice(2) : name);

/** Names of the cluster (api, api-int, *.apps, nodes): a Gateway name equal to or under one is refused, as is a wildcard covering one. */
function clusterRoots(spec: ClusterSpec): string[] {
  const nodes = spec.nodes.flatMap((n) => [n.name.endsWith(`.${spec.domain}`) ? n.name : `${n.name}.${spec.domain}`]);
  return [`api.${spec.domain}`, `api-int.${spec.domain}`, `apps.${spec.domain}`, ...nodes];
}

function covers(name: string, root: string): boolean {
  if (under(bodyOf(name), root)) return true;
  return name.startsWith('*.') && root.endsWith(`.${bodyOf(name)}`);
}

function protection(name: string, spec: ClusterSpec, roots: readonly string[]): { reason: RefusalReason; detail: string } | undefined {
  const root = roots.find((r) => covers(name, r));
  if (root !== undefined) return { reason: 'cluster-name', detail: `is or covers the cluster's own name ${root}` };
  const other = spec.extraRecords.find((e) => e.name === name || covers(name, bodyOf(e.name)) || (e.name.startsWith('*.') && under(bodyOf(name), bodyOf(e.name))));
  if (other !== undefined) return { reason: 'other-source', detail: `meets ${other.name}, which ${other.source} serves` };
  return undefined;
}

const older = (a: OwnedEndpoints, b: OwnedEndpoints): number => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.source < b.source ? -1 : a.source > b.source ? 1 : 0);
const sameContent = (a: GatewayEndpoint, b: GatewayEndpoint): boolean => a.ttl === b.ttl && a.weight === b.weight && a.geo === b.geo && a.targets.join(' ') === b.targets.join(' ');
const family = (e: GatewayEndpoint): string => (e.recordType === 'CNAME' ? 'CNAME' : 'address');

const accepted = new WeakMap<GatewaySpec, { spec: ClusterSpec; result: AcceptedGatewayNames }>();

/**
 * Which endpoints are served. A name outside the owner's zone, of the cluster or of another
 * source is refused. Among the objects asking for one name, the oldest decides: objects of
 * other namespaces are refused (a tenant never adds targets to another's name); within the
 * namespace, records of the same type and set identifier must agree, or the later one is
 * refused — never merged. Distinct set identifiers (Kuadrant's geo and weighted sets) combine.
 */
export function acceptGatewayNames(spec: ClusterSpec): AcceptedGatewayNames {
  const gateway = spec.gateway;
  if (gateway === undefined || !ROLE_TRAITS[spec.role].clusterNames) return { byName: new Map(), refused: [], external: [] };
  const memo = accepted.get(gateway);
  if (memo?.spec === spec) return memo.result;
  const roots = clusterRoots(spec);
  const refused = new Map<string, Refusal>();
  const refuse = (name: string, source: string, reason: RefusalReason, detail: string) => {
    const key = `${name} ${source} ${reason}`;
    if (!refused.has(key)) refused.set(key, { name, source, reason, detail });
  };
  const claims = new Map<string, Claim[]>();
  const verdicts = new Map<string, ReturnType<typeof protection> | null>();
  for (const owner of [...gateway.owners].sort(older)) {
    for (const endpoint of owner.endpoints) {
      const name = endpoint.dnsName;
      if (owner.zone === '' || !under(bodyOf(name), owner.zone)) {
        refuse(name, owner.source, 'outside-zones', owner.zone === '' ? `is in none of the gateway zones (${gateway.zones.join(', ')})` : `is outside the zone ${owner.zone}`);
        continue;
      }
      let verdict = verdicts.get(name);
      if (verdict === undefined) verdicts.set(name, (verdict = protection(name, spec, roots) ?? null));
      if (verdict !== null) {
        refuse(name, owner.source, verdict.reason, verdict.detail);
        continue;
      }
      const list = claims.get(name);
      if (list === undefined) {
        claims.set(name, [{ endpoint, owner }]);
        continue;
      }
      const first = list[0] as Claim;
      if (first.owner.namespace !== owner.namespace) {
        refuse(name, owner.source, 'other-owner', `is served for the older ${first.owner.source} of namespace ${first.owner.namespace}`);
        continue;
      }
      if (family(first.endpoint) !== family(endpoint)) {
        refuse(name, owner.source, 'duplicate', `is a ${first.endpoint.recordType} record of the older ${first.owner.source}`);
        continue;
      }
      const same = list.find((c) => c.endpoint.recordType === endpoint.recordType && c.endpoint.setIdentifier === endpoint.setIdentifier);
      if (same === undefined) list.push({ endpoint, owner });
      else if (same.owner !== owner && !sameContent(same.endpoint, endpoint)) {
        refuse(name, owner.source, 'duplicate', `has a ${endpoint.recordType} record${endpoint.setIdentifier ? ` (set ${endpoint.setIdentifier})` : ''} of the older ${same.owner.source}`);
      }
    }
  }
  const external = new Set<string>();
  for (const list of claims.values()) for (const { endpoint } of list) if (endpoint.recordType === 'CNAME') for (const t of endpoint.targets) if (!claims.has(t)) external.add(t);
  const result = { byName: claims, refused: [...refused.values()], external: [...external].sort() };
  accepted.set(gateway, { spec, result });
  return result;
}

/** What one name answers: the CNAME hops, then the addresses of the chain's last name. */
export interface GatewayAnswer {
  readonly chain: readonly { readonly owner: string; readonly target: string; readonly ttl: number }[];
  readonly owner: string;
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  readonly ttl: number;
  /** Per address, when the last name is a weighted set. */
  readonly weights: ReadonlyMap<string, number> | undefined;
}

/** Longer chains than Kuadrant's (host → klb → geo → leaf → external) are refused as loops. */
const MAX_CHAIN = 8;

/**
 * Answers names the way a client in this cluster's geo would be answered: a geo set picks
 * `geoCode`, else the default geo (`*`); a weighted set (several targets) is answered with all
 * its targets' addresses at its own name, weighted for `loadbalance weighted`; one target is a
 * CNAME hop. External targets give the addresses lbdns resolved for them. Each name is
 * answered once per record set: a host's chain reuses the answers of the names it leads to.
 */
export function gatewayAnswerer(names: AcceptedGatewayNames, geoCode: string | undefined, resolutions: ReadonlyMap<string, Resolution>): (name: string) => GatewayAnswer {
  const answered = new Map<string, GatewayAnswer>();
  const pending = new Set<string>();
  const answer = (name: string, ttlHint: number): GatewayAnswer => {
    const known = answered.get(name);
    if (known !== undefined) return known;
    const none: GatewayAnswer = { chain: [], owner: name, v4: [], v6: [], ttl: ttlHint, weights: undefined };
    // A loop has no addresses; it is left unserved like any name without one.
    if (pending.has(name)) return none;
    pending.add(name);
    const result = compute(name, none);
    pending.delete(name);
    answered.set(name, result.chain.length > MAX_CHAIN ? none : result);
    return answered.get(name) as GatewayAnswer;
  };
  const compute = (name: string, none: GatewayAnswer): GatewayAnswer => {
    const claims = names.byName.get(name);
    if (claims === undefined) {
      const r = resolutions.get(name);
      return r ? { ...none, v4: r.v4, v6: r.v6 } : none;
    }
    const endpoints = claims.map((c) => c.endpoint);
    if (endpoints[0]?.recordType !== 'CNAME') {
      const { v4, v6 } = splitFamilies(endpoints.flatMap((e) => e.targets));
      const weighted = endpoints.some((e) => e.weight !== undefined);
      const weights = weighted ? new Map(endpoints.flatMap((e) => e.targets.map((t): [string, number] => [t, e.weight ?? 1]))) : undefined;
      return { chain: [], owner: name, v4, v6, ttl: Math.min(...endpoints.map((e) => e.ttl)), weights };
    }
    let set = endpoints;
    if (set.some((e) => e.geo !== undefined)) {
      const wanted = set.filter((e) => geoCode !== undefined && e.geo === geoCode);
      set = wanted.length > 0 ? wanted.slice(0, 1) : set.filter((e) => e.geo === '*').slice(0, 1);
      if (set.length === 0) return none;
    }
    const ttl = Math.min(...set.map((e) => e.ttl));
    if (set.length === 1) {
      const target = (set[0] as GatewayEndpoint).targets[0] as string;
      const rest = answer(target, ttl);
      return { ...rest, chain: [{ owner: name, target, ttl }, ...rest.chain] };
    }
    const weights = new Map<string, number>();
    const v4 = new Set<string>();
    const v6 = new Set<string>();
    for (const e of set) {
      const sub = answer(e.targets[0] as string, e.ttl);
      for (const ip of sub.v4) v4.add(ip);
      for (const ip of sub.v6) v6.add(ip);
      for (const ip of [...sub.v4, ...sub.v6]) weights.set(ip, Math.max(weights.get(ip) ?? 0, e.weight ?? 1));
    }
    return { chain: [], owner: name, ...splitFamilies([...v4, ...v6]), ttl, weights };
  };
  return (name) => answer(name, 60);
}

/** CoreDNS reads weights 1–255 (a 0 makes its pick divide by zero): larger sets are scaled down, 0 becomes 1. */
export function coreDnsWeights(owner: string, weights: ReadonlyMap<string, number>): WeightBlock {
  const max = Math.max(...weights.values());
  const scale = max > 255 ? 255 / max : 1;
  return { owner, weights: [...weights].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([ip, w]) => ({ ip, weight: Math.min(255, Math.max(1, Math.round(w * scale))) })) };
}
