import { ROLE_TRAITS, type ClusterSpec, type Resolution } from '../model.js';
import type { HostResolver } from './host-resolver.js';
import { acceptGatewayNames } from './gateway-names.js';

/** Every hostname the role serves (its LBs, extra records and Gateway CNAME targets on control planes), each once, sorted. */
export function hostnamesOf(spec: ClusterSpec): string[] {
  const names = new Set<string>();
  const extras = ROLE_TRAITS[spec.role].clusterNames ? spec.extraRecords.flatMap((r) => r.targets) : [];
  const targets = [...ROLE_TRAITS[spec.role].serves.flatMap((lb) => spec.lbs[lb]), ...extras];
  for (const t of targets) if (t.kind === 'hostname') names.add(t.hostname);
  for (const h of acceptGatewayNames(spec).external) names.add(h);
  return [...names].sort();
}

/** One-shot resolution: all hostnames in parallel; the first failure fails the whole render. */
export async function resolveAll(spec: ClusterSpec, resolver: HostResolver): Promise<Map<string, Resolution>> {
  const hostnames = hostnamesOf(spec);
  const results = await Promise.all(hostnames.map((h) => resolver.resolve(h)));
  return new Map(results.map((r) => [r.hostname, r]));
}
