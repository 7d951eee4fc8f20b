import { ValidationError } from '../errors.js';
import { splitFamilies } from '../grammar/ip.js';
import { nodeFqdn } from '../grammar/validate.js';
import {
  DEFAULTS,
  LIMITS,
  ROLE_TRAITS,
  type ClusterSpec,
  type Endpoint,
  type LbName,
  type NameRecord,
  type NodeRecord,
  type RecordSet,
  type Resolution,
} from '../model.js';
import { acceptGatewayNames, type Refusal } from './gateway-names.js';
import { GatewayRecordBook, type GatewayRecords } from './gateway-records.js';
import { countByKind, sourceKind, sumTotals, type RecordSetTotals } from './source-kind.js';
import { findName, mergeOrdered } from './specificity.js';
import { apartFromNodes } from './node-names.js';

export interface RecordSetResult {
  readonly recordSet: RecordSet;
  /** Names that have no address yet (unresolved hostnames, empty LB lists): not served, so queries fall through upstream. */
  readonly empty: readonly string[];
  /** Names served with their previous addresses (see BuildOptions.previous), and why; `dropped`: over the address limit with nothing to keep, so not served. */
  readonly held: readonly { readonly name: string; readonly reason: string; readonly dropped?: true }[];
  /** Names served otherwise than their own source would have them, and how. */
  readonly notes: readonly { readonly name: string; readonly note: string }[];
  /** Names the cluster says not to serve (ClusterSpec.withheld): left to the upstreams. */
  readonly withheld: readonly { readonly name: string; readonly reason: string }[];
  /** Gateway DNS: each name served with the objects it comes from, and every name refused. */
  readonly gateway: {
    readonly served: readonly { readonly name: string; readonly source: string }[];
    readonly refused: readonly Refusal[];
    /** Gateway names of `empty`, and why each is. */
    readonly notServed: readonly { readonly name: string; readonly reason: string }[];
  };
  /** recordSet.names counted, without a walk over the Gateway names at every change. */
  readonly totals: RecordSetTotals;
}

export interface BuildOptions {
  /**
   * What is being served now. With it, a name whose targets give no address yet (a new LB
   * hostname not resolved) or more than the limit keeps its previous addresses instead of
   * being dropped or failing the whole set: last known good, one name at a time. Without it
   * such a name is empty, and over the limit an error unless `lasting`.
   */
  readonly previous?: RecordSet | undefined;
  /**
   * Until there is a `previous`: the names the files on disk served when the process started
   * (in specificity order). A name with no address yet, or over the limit, keeps these, as it
   * keeps `previous`: a restart while its host names do not resolve does not drop it, and one
   * while they give more than 16 addresses does not stop every write.
   */
  readonly servedBefore?: readonly NameRecord[] | undefined;
  /** A long-running monitor: a name over the limit with nothing to keep is left out, before its first write too, never failing the set (a DNSRecord's name always is: API data never fails it). */
  readonly lasting?: boolean | undefined;
  /**
   * Just after a restart (MonitorOptions.restartHoldMs): a name one of whose host names has
   * not answered yet in this process also keeps the addresses it served before, besides those
   * that did resolve. The files on disk cannot say which address came from which host name,
   * so the whole earlier set stays; only for a while, as a host name that never answers again
   * (an LB deleted, its addresses given to another) must not keep its old addresses for good.
   */
  readonly holdUnresolved?: boolean | undefined;
}

export function lbRecordName(lb: LbName, domain: string): string {
  return lb === 'ingress' ? `*.apps.${domain}` : `${lb}.${domain}`;
}

/**
 * The endpoints a load balancer's name answers. A private cluster has no external API LB: its
 * `api` name is the internal LB's, as inside the cluster the API is reached through it.
 */
export function lbEndpoints(spec: ClusterSpec, lb: LbName): { readonly endpoints: readonly Endpoint[]; readonly viaInternal: boolean } {
  // An external LB named with data all refused is bad data, held as such (refusedLbs), not a private cluster.
  const viaInternal = lb === 'api' && spec.lbs.api.length === 0 && spec.refusedLbs?.api === undefined && spec.lbs['api-int'].length > 0;
  return { endpoints: viaInternal ? spec.lbs['api-int'] : spec.lbs[lb], viaInternal };
}

/** What a private cluster's `api` is, for the log, `display` and the admin's records. */
export const PRIVATE_API_NOTE = 'served by the internal API load balancer: a private cluster has no external one';

/** The addresses endpoints stand for now: IP literals as they are, hostnames as resolved (none while unresolved). */
export function addressesOf(targets: readonly Endpoint[], resolutions: ReadonlyMap<string, Resolution>): string[] {
  return targets.flatMap((t) => {
    if (t.kind === 'ip') return [t.ip];
    const r = resolutions.get(t.hostname);
    return r ? [...r.v4, ...r.v6] : [];
  });
}

/**
 * The pure heart of every command: validated spec + resolved hostnames → what the
 * Corefile serves. A hostname missing from `resolutions` contributes nothing.
 */
export function buildRecordSet(spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>, options: BuildOptions = {}): RecordSetResult {
  const targetsByName = new Map<string, { targets: Endpoint[]; source: string; ttl?: number }>();
  const add = (name: string, targets: readonly Endpoint[], source: string, ttl?: number): void => {
    const entry = targetsByName.get(name);
    if (entry) entry.targets.push(...targets);
    else targetsByName.set(name, { targets: [...targets], source, ...(ttl === undefined ? {} : { ttl }) });
  };
  const withheld: { name: string; reason: string }[] = [];
  const traits = ROLE_TRAITS[spec.role];
  const notes: { name: string; note: string }[] = [];
  for (const lb of traits.serves) {
    const reason = spec.withheld?.[lb];
    const name = lbRecordName(lb, spec.domain);
    if (reason !== undefined) {
      withheld.push({ name, reason });
      continue;
    }
    const { endpoints, viaInternal } = lbEndpoints(spec, lb);
    add(name, endpoints, viaInternal ? 'api-int' : lb);
    if (viaInternal) notes.push({ name, note: PRIVATE_API_NOTE });
  }
  // An LB name answers with its LB only: the default ingress DNSRecord names *.apps for the
  // router LB lbdns already serves, and one naming anything else must not add to or outlive it.
  const lbNames = new Set(traits.serves.map((lb) => lbRecordName(lb, spec.domain)));
  const nodesReason = traits.clusterNames ? spec.withheld?.nodes : undefined;
  if (traits.clusterNames) {
    // Nodes left to other DNS servers are not in this CoreDNS: a DNSRecord over them hides nothing.
    const { kept, met } = nodesReason === undefined ? apartFromNodes(spec.extraRecords, spec.nodes, spec.domain) : { kept: spec.extraRecords, met: [] };
    for (const extra of kept) if (!lbNames.has(extra.name)) add(extra.name, extra.targets, extra.source, extra.ttl);
    for (const m of met) notes.push({ name: m.name, note: `not served for ${m.source}: it ${m.name.startsWith('*.') ? 'covers' : 'is'} the name of node ${m.node}, which its hosts entry answers` });
  }

  // An LB named with data that was all refused is bad data, not "no LB": its name keeps what it served.
  const refused = new Map(traits.serves.flatMap((lb) => {
    const why = spec.refusedLbs?.[lb] ?? (lb === 'api' && spec.lbs.api.length === 0 ? spec.refusedLbs?.['api-int'] : undefined);
    return why === undefined ? [] : [[lbRecordName(lb, spec.domain), why] as const];
  }));
  const names: NameRecord[] = [];
  const empty: string[] = [];
  const held: { name: string; reason: string; dropped?: true }[] = [];
  for (const [name, { targets, source, ttl }] of targetsByName) {
    const { v4, v6 } = splitFamilies(addressesOf(targets, resolutions));
    const count = v4.length + v6.length;
    const hostnames = targets.flatMap((t) => (t.kind === 'hostname' ? [t.hostname] : []));
    const from = hostnames.length > 0 ? ` (from ${hostnames.join(', ')})` : '';
    const problem = count > LIMITS.maxIpsPerName ? `has ${count} addresses${from}, more than the limit of ${LIMITS.maxIpsPerName}` : count === 0 && targets.length > 0 ? 'has no resolved address yet' : count === 0 ? refused.get(name) : undefined;
    const before = options.previous?.names ?? options.servedBefore;
    const kept = problem && before ? findName(before, name) : undefined;
    if (kept) {
      held.push({ name, reason: problem as string });
      names.push(kept.source === source ? kept : { ...kept, source });
    } else if (count === 0) {
      empty.push(name);
    } else if (count > LIMITS.maxIpsPerName && !options.previous && options.lasting !== true && sourceKind(source) === 'lb') {
      throw new ValidationError(name, [...v4, ...v6], problem as string, 'CoreDNS answers and the Infrastructure status carry at most 16; reduce the LB endpoints');
    } else if (count > LIMITS.maxIpsPerName) {
      held.push({ name, reason: problem as string, dropped: true });
      empty.push(name);
    } else {
      const unresolved = options.holdUnresolved === true ? hostnames.filter((h) => !resolutions.has(h)) : [];
      const earlier = unresolved.length > 0 && before ? findName(before, name) : undefined;
      const both = earlier ? splitFamilies([...v4, ...v6, ...earlier.v4, ...earlier.v6]) : undefined;
      const widened = both !== undefined && both.v4.length + both.v6.length > count && both.v4.length + both.v6.length <= LIMITS.maxIpsPerName;
      if (widened) held.push({ name, reason: `has host names with no answer yet since the start (${unresolved.join(', ')}); serving what it served before besides what resolved` });
      names.push({ name, ...(widened ? both : { v4, v6 }), source, ...(ttl === undefined ? {} : { addressTtl: ttl }) });
    }
  }
  const gateway = gatewayRecords(spec, resolutions, options.previous?.names ?? options.servedBefore);
  held.push(...gateway.held);
  for (const { name } of gateway.empty) empty.push(name);

  if (nodesReason !== undefined) withheld.push({ name: 'node names', reason: nodesReason });
  const nodes: NodeRecord[] = traits.clusterNames && nodesReason === undefined
    ? spec.nodes.map((node) => ({
        name: node.name,
        fqdn: nodeFqdn(node.name, spec.domain),
        ...splitFamilies(node.ips),
      }))
    : [];

  return {
    recordSet: {
      domain: spec.domain,
      role: spec.role,
      ttl: spec.ttl,
      reload: spec.reload,
      listen: spec.listen ?? DEFAULTS.listen,
      healthPort: spec.healthPort ?? DEFAULTS.healthPort,
      readyPort: spec.readyPort ?? DEFAULTS.readyPort,
      cacheSeconds: DEFAULTS.cacheSeconds,
      names: mergeOrdered(gateway.names, names),
      nodes,
      upstreams: spec.upstreams,
      ...(spec.gateway ? { weights: gateway.weights, gatewayZones: spec.gateway.zones, ...underWildcards(gateway) } : {}),
    },
    empty: empty.sort(),
    notes,
    held,
    withheld,
    gateway: { served: gateway.served, refused: gateway.refused, notServed: gateway.empty },
    totals: sumTotals({ names: countByKind(names), addresses: names.reduce((n, r) => n + r.v4.length + r.v6.length, 0) }, gateway.totals),
  };
}

/**
 * Why each name of `empty` goes unserved (so its queries go upstream). An api LB that nothing
 * names is a private cluster's normal state, and said so rather than taken for a fault.
 */
export function whyNotServed(spec: ClusterSpec, result: Pick<RecordSetResult, 'empty' | 'gateway'>): { readonly name: string; readonly reason: string }[] {
  const gateway = new Map(result.gateway.notServed.map((n) => [n.name, n.reason]));
  return result.empty.map((name) => {
    const why = gateway.get(name);
    if (why !== undefined) return { name, reason: why };
    const lb = ROLE_TRAITS[spec.role].serves.find((l) => lbRecordName(l, spec.domain) === name);
    if (lb === 'api' && lbEndpoints(spec, 'api').viaInternal) return { name, reason: 'its internal API load balancer (a private cluster has no external one) has no resolved address yet' };
    if (lb === 'api' && spec.lbs.api.length === 0) return { name, reason: 'no external API load balancer (a private cluster has none), nor an internal one yet' };
    if (lb !== undefined && spec.lbs[lb].length === 0) return { name, reason: 'no load balancer known yet' };
    return { name, reason: 'its host names have no resolved address yet' };
  });
}

/**
 * The Gateway names not served that a served wildcard over them would answer (RFC 4592: from
 * the file plugin, `*.z` answers every name under z that the zone file does not hold).
 */
function underWildcards(gateway: GatewayRecords): { unanswered?: readonly string[] } {
  const unserved = [...gateway.empty.map((e) => e.name), ...gateway.refused.filter((r) => r.reason === 'over-limit').map((r) => r.name)];
  if (unserved.length === 0) return {};
  const wildcards = new Set(gateway.names.flatMap((n) => (n.name.startsWith('*.') ? [n.name.slice(2)] : [])));
  const covered = (name: string): boolean => {
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) if (wildcards.has(name.slice(dot + 1))) return true;
    return false;
  };
  const unanswered = [...new Set(unserved.filter(covered))].sort();
  return unanswered.length > 0 ? { unanswered } : {};
}

let book: GatewayRecordBook | undefined;

/**
 * The Gateway DNS names: each a chain of CNAMEs answered with its final addresses. A name
 * whose chain gives no address yet, or more than the limit, keeps what `previous` served
 * (last known good), else is left out (`empty`) or refused (over the limit).
 */
function gatewayRecords(spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>, previous: readonly NameRecord[] | undefined): GatewayRecords {
  const geoCode = spec.gateway?.geoCode;
  if (book === undefined || book.geoCode !== geoCode) book = new GatewayRecordBook(geoCode);
  return book.build(acceptGatewayNames(spec), resolutions, (name) => (previous === undefined ? undefined : findName(previous, name)));
}
