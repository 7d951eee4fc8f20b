import { splitFamilies } from '../grammar/ip.js';
import { LB_NAMES, type ClusterSpec, type Endpoint, type ExtraRecord, type LbName, type Resolution } from '../model.js';
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

export interface AdminDnsRecord {
  readonly record: ExtraRecord;
  readonly policy: 'Managed' | 'Unmanaged';
  /** Set when another record gives this name: the source given instead. */
  readonly givenBy?: string;
}

/**
 * The DNSRecords (and config records) for the admin's DNS, one answer a name: Managed records
 * of one name merged, as buildRecordSet merges them into what CoreDNS serves (every target, the
 * first's TTL and source); an Unmanaged one only where no Managed one has its name, the first
 * of its name. Unmanaged first, then Managed, each in the order given.
 */
export function adminDnsRecords(managed: readonly ExtraRecord[], unmanaged: readonly ExtraRecord[]): AdminDnsRecord[] {
  const merged = new Map<string, ExtraRecord>();
  for (const r of managed) {
    const held = merged.get(r.name);
    merged.set(r.name, held === undefined ? r : { ...held, targets: [...held.targets, ...r.targets] });
  }
  const firstUnmanaged = new Map<string, ExtraRecord>();
  for (const r of unmanaged) if (!merged.has(r.name) && !firstUnmanaged.has(r.name)) firstUnmanaged.set(r.name, r);
  const givenFor = (name: string): ExtraRecord => (merged.get(name) ?? firstUnmanaged.get(name)) as ExtraRecord;
  return [
    ...unmanaged.map((r): AdminDnsRecord => (firstUnmanaged.get(r.name) === r ? { record: r, policy: 'Unmanaged' } : { record: r, policy: 'Unmanaged', givenBy: givenFor(r.name).source })),
    ...managed.map((r): AdminDnsRecord => {
      const given = merged.get(r.name) as ExtraRecord;
      if (given.source !== r.source) return { record: r, policy: 'Managed', givenBy: given.source };
      return { record: given, policy: 'Managed' };
    }),
  ];
}
