import { ROLE_TRAITS, type ClusterSpec, type Resolution } from '../model.js';
import type { HostResolver } from './host-resolver.js';
import { acceptGatewayNames } from './gateway-names.js';
import { lbEndpoints, lbRecordName } from './record-set.js';

/** The hostnames of the cluster's own names the role serves (its LBs and extra records), each once, sorted. */
export function clusterHostnamesOf(spec: ClusterSpec): string[] {
  const names = new Set<string>();
  const extras = ROLE_TRAITS[spec.role].clusterNames ? spec.extraRecords.flatMap((r) => r.targets) : [];
  const targets = [...ROLE_TRAITS[spec.role].serves.flatMap((lb) => spec.lbs[lb]), ...extras];
  for (const t of targets) if (t.kind === 'hostname') names.add(t.hostname);
  return [...names].sort();
}

/** The LB host names of the cluster's own names among `names` (names held with what they served before); Gateway names' targets are not LB host names. */
export function hostnamesServing(spec: ClusterSpec, names: ReadonlySet<string>): Set<string> {
  const held = new Set<string>();
  const targets = [
    ...ROLE_TRAITS[spec.role].serves.flatMap((lb) => (names.has(lbRecordName(lb, spec.domain)) ? lbEndpoints(spec, lb).endpoints : [])),
    ...(ROLE_TRAITS[spec.role].clusterNames ? spec.extraRecords.filter((r) => names.has(r.name)).flatMap((r) => r.targets) : []),
  ];
  for (const t of targets) if (t.kind === 'hostname') held.add(t.hostname);
  return held;
}

/** Every hostname the role serves: the cluster's own and the Gateway names' CNAME targets outside the zones, each once, sorted. */
export function hostnamesOf(spec: ClusterSpec): string[] {
  const external = acceptGatewayNames(spec).external;
  if (external.length === 0) return clusterHostnamesOf(spec);
  return [...new Set([...clusterHostnamesOf(spec), ...external])].sort();
}

/** One-shot resolution: all hostnames in parallel; the first failure fails the whole render. */
export async function resolveAll(spec: ClusterSpec, resolver: HostResolver): Promise<Map<string, Resolution>> {
  const hostnames = hostnamesOf(spec);
  const results = await Promise.all(hostnames.map((h) => resolver.resolve(h)));
  return new Map(results.map((r) => [r.hostname, r]));
}
