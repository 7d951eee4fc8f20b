import { UsageError } from '../errors.js';
import { parseSubset } from '../grammar/subset.js';
import type { RawConfig } from '../inputs/config.js';
import type { ClusterSpec, ExtraRecord, LbName } from '../model.js';
import type { Logger } from '../runtime/log.js';
import { apartFromNodeNames } from '../resolve/node-names.js';

/** The names print-records prints and check-dns checks, as `--names` selects them. */
export const RECORD_NAMES = ['api', 'api-int', 'apps', 'dnsrecords', 'gateway'] as const;
export type RecordName = (typeof RECORD_NAMES)[number];

/** The LB behind each of the three cluster names; `dnsrecords` stands for every ingress controller's DNSRecord, `gateway` for every Gateway DNS name served. */
export const RECORD_NAME_LB: Readonly<Record<Exclude<RecordName, 'dnsrecords' | 'gateway'>, LbName>> = { api: 'api', 'api-int': 'api-int', apps: 'ingress' };

/** `--names`: a comma-separated subset, in the fixed order; absent: all of them. */
export function parseRecordNames(value: string | undefined, command: string): RecordName[] {
  return value === undefined ? [...RECORD_NAMES] : parseSubset('--names', value, RECORD_NAMES, `is not a name ${command} knows`);
}

/** The LBs behind the names of `--names`: what the command needs addresses of. */
export function lbsOf(wanted: readonly RecordName[]): LbName[] {
  return wanted.flatMap((n) => (n === 'dnsrecords' || n === 'gateway' ? [] : [RECORD_NAME_LB[n]]));
}

/** `--names gateway` named without a Gateway zone: a usage error, found before the cluster is asked (all names, the default, just have none). */
export function checkGatewayAsked(names: string | undefined, wanted: readonly RecordName[], raw: RawConfig): void {
  if (names !== undefined && wanted.includes('gateway') && (raw.gatewayZones ?? []).length === 0) {
    throw new UsageError('--names gateway needs --gateway-zone (or gatewayZones in --config): Gateway DNS names are served only in its zones');
  }
}

/**
 * The ingress DNSRecords the admin's DNS is given: beside the LB names, asked for or not (an
 * LB's name goes with its LB alone, as the Corefile serves it: the default ingress DNSRecord
 * names *.apps for the router LB, which would give *.apps twice, or a CNAME beside its A
 * records), and apart from the nodes' own names (apartFromNodeNames), each left out logged.
 */
export function dnsRecordsBeside(records: readonly ExtraRecord[], lbNames: ReadonlySet<string>, spec: Pick<ClusterSpec, 'nodes' | 'domain'>, log: Logger): ExtraRecord[] {
  const { kept, met } = apartFromNodeNames(records.filter((r) => !lbNames.has(r.name)), spec.nodes, spec.domain);
  for (const m of met) log.warn("DNSRecord not given to the admin's DNS: it names a node, whose own record there it would replace", { name: m.name, source: m.source, node: m.node });
  return [...kept];
}
