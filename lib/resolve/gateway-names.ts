import { splitFamilies } from '../grammar/ip.js';
import { ROLE_TRAITS, type ClusterSpec, type GatewayEndpoint, type Resolution, type WeightBlock } from '../model.js';
import { ClaimIndex, type Claim, type Refusal } from './gateway-claims.js';
import { nameGuard } from './name-guard.js';
import { sameObjects } from '../sources/per-object.js';

/*
 * Gateway DNS names are asked for by tenants (a Gateway, an HTTPRoute, a DNSPolicy, a
 * Kuadrant DNSRecord), so every name is confined before it is served: to the configured zones,
 * away from the cluster's own names and from names other sources serve, and to one owner.
 */

export type { Refusal, RefusalReason } from './gateway-claims.js';

export interface AcceptedGatewayNames {
  /** dnsName → the endpoints served for it, all from one namespace; from nothing, oldest owner first. */
  readonly byName: ReadonlyMap<string, readonly Claim[]>;
  readonly refused: readonly Refusal[];
  /** CNAME targets no accepted name answers: host names lbdns resolves itself. */
  readonly external: readonly string[];
}

let index: ClaimIndex | undefined;
let last: { spec: ClusterSpec; result: AcceptedGatewayNames } | undefined;

/**
 * Which endpoints are served. A name outside the owner's zone, of the cluster or of another
 * source is refused; among the owners asking for one name, the oldest decides (ClaimIndex).
 * The claims are kept for the next spec, and the result holds until then: the record set reads
 * it at once.
 */
export function acceptGatewayNames(spec: ClusterSpec): AcceptedGatewayNames {
  const gateway = spec.gateway;
  if (gateway === undefined || !ROLE_TRAITS[spec.role].clusterNames) return { byName: new Map(), refused: [], external: [] };
  if (last?.spec === spec) return last.result;
  const guard = nameGuard(spec);
  const zones = gateway.zones.join(', ');
  if (index === undefined || index.guard !== guard || index.zones !== zones) index = new ClaimIndex(guard, zones);
  index.update(gateway.owners);
  last = { spec, result: { byName: index.byName, refused: index.refused(), external: index.external() } };
  return last.result;
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
 * An answer is kept with what it came from: the name's endpoints (kept per owner, so the same
 * objects while the owner is unchanged), the geo, and its targets' answers. A change then
 * builds answers for its own names only, and an unchanged name keeps its answer object.
 */
const keptAnswers = new WeakMap<GatewayEndpoint, { endpoints: readonly GatewayEndpoint[]; geoCode: string | undefined; targets: readonly GatewayAnswer[]; answer: GatewayAnswer }>();
const externalAnswers = new WeakMap<Resolution, GatewayAnswer>();

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
      if (r === undefined) return none;
      const kept = externalAnswers.get(r);
      if (kept?.ttl === none.ttl) return kept;
      const external = { ...none, v4: r.v4, v6: r.v6 };
      externalAnswers.set(r, external);
      return external;
    }
    const endpoints = claims.map((c) => c.endpoint);
    const first = endpoints[0] as GatewayEndpoint;
    let kept = keptAnswers.get(first);
    if (kept !== undefined && (kept.geoCode !== geoCode || !sameObjects(kept.endpoints, endpoints))) kept = undefined;
    if (first.recordType !== 'CNAME') {
      if (kept !== undefined) return kept.answer;
      const { v4, v6 } = splitFamilies(endpoints.flatMap((e) => e.targets));
      const weighted = endpoints.some((e) => e.weight !== undefined);
      const weights = weighted ? new Map(endpoints.flatMap((e) => e.targets.map((t): [string, number] => [t, e.weight ?? 1]))) : undefined;
      const result = { chain: [], owner: name, v4, v6, ttl: Math.min(...endpoints.map((e) => e.ttl)), weights };
      keptAnswers.set(first, { endpoints, geoCode, targets: [], answer: result });
      return result;
    }
    let set = endpoints;
    if (set.some((e) => e.geo !== undefined)) {
      const wanted = set.filter((e) => geoCode !== undefined && e.geo === geoCode);
      set = wanted.length > 0 ? wanted.slice(0, 1) : set.filter((e) => e.geo === '*').slice(0, 1);
      if (set.length === 0) return none;
    }
    const targets = set.map((e) => answer(e.targets[0] as string, e.ttl));
    if (kept !== undefined && sameObjects(kept.targets, targets)) return kept.answer;
    const result = cnameAnswer(name, set, targets);
    keptAnswers.set(first, { endpoints, geoCode, targets, answer: result });
    return result;
  };
  return (name) => answer(name, 60);
}

/** One target: a CNAME hop to its answer. Several (a weighted set): all their addresses at this name. */
function cnameAnswer(name: string, set: readonly GatewayEndpoint[], targets: readonly GatewayAnswer[]): GatewayAnswer {
  const ttl = Math.min(...set.map((e) => e.ttl));
  if (set.length === 1) {
    const rest = targets[0] as GatewayAnswer;
    return { ...rest, chain: [{ owner: name, target: (set[0] as GatewayEndpoint).targets[0] as string, ttl }, ...rest.chain] };
  }
  const weights = new Map<string, number>();
  const v4 = new Set<string>();
  const v6 = new Set<string>();
  set.forEach((e, i) => {
    const sub = targets[i] as GatewayAnswer;
    for (const ip of sub.v4) v4.add(ip);
    for (const ip of sub.v6) v6.add(ip);
    for (const ip of [...sub.v4, ...sub.v6]) weights.set(ip, Math.max(weights.get(ip) ?? 0, e.weight ?? 1));
  });
  return { chain: [], owner: name, ...splitFamilies([...v4, ...v6]), ttl, weights };
}

/** CoreDNS reads weights 1–255 (a 0 makes its pick divide by zero): larger sets are scaled down, 0 becomes 1. */
export function coreDnsWeights(owner: string, weights: ReadonlyMap<string, number>): WeightBlock {
  const max = Math.max(...weights.values());
  const scale = max > 255 ? 255 / max : 1;
  return { owner, weights: [...weights].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([ip, w]) => ({ ip, weight: Math.min(255, Math.max(1, Math.round(w * scale))) })) };
}
