import { splitFamilies } from '../grammar/ip.js';
import { LB_NAMES, type ClusterSpec, type Endpoint, type LbName, type Resolution } from '../model.js';
import { addressesOf, lbEndpoints, lbRecordName } from './record-set.js';

/**
 * One name the admin's own DNS must carry for the cluster, with what the cluster knows of
 * its load balancer. Only api, api-int and *.apps: node names and extra DNSRecords are
 * served by the cluster's CoreDNS to the cluster itself and change as the cluster does.
 */
export interface AdminName {
  readonly lb: LbName;
  /** Absolute, no trailing dot; `*.apps.<domain>` for the ingress LB. */
  readonly name: string;
  readonly endpoints: readonly Endpoint[];
  /** Every address of every endpoint, hostnames as currently resolved; canonical and sorted. */
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  /** Hostname endpoints with no resolution: they contribute no address. */
  readonly unresolved: readonly string[];
  /** A private cluster's api: the internal LB's endpoints. */
  readonly viaInternal: boolean;
}

export const LB_DESCRIPTIONS: Readonly<Record<LbName, string>> = {
  api: 'external API load balancer',
  'api-int': 'internal API load balancer',
  ingress: 'ingress load balancer, for every name under apps',
};

/** The three names in a fixed order (api, api-int, *.apps), whatever the node role: the admin's DNS serves everyone. */
export function adminNames(spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>): AdminName[] {
  return LB_NAMES.map((lb) => {
    const { endpoints, viaInternal } = lbEndpoints(spec, lb);
    const unresolved = endpoints.flatMap((e) => (e.kind === 'hostname' && !resolutions.has(e.hostname) ? [e.hostname] : []));
    return { lb, name: lbRecordName(lb, spec.domain), endpoints, ...splitFamilies(addressesOf(endpoints, resolutions)), unresolved, viaInternal };
  });
}

/** Why a name has no address, for a log line or a comment the admin reads. */
export function noAddressReason(n: AdminName): string {
  if (n.endpoints.length === 0) return `the cluster names no ${LB_DESCRIPTIONS[n.lb]} yet`;
  const lb = n.viaInternal ? `${LB_DESCRIPTIONS['api-int']} (a private cluster has no external one)` : LB_DESCRIPTIONS[n.lb];
  return `its ${lb} host name${n.unresolved.length > 1 ? 's' : ''} ${n.unresolved.join(', ')} did not resolve`;
}
