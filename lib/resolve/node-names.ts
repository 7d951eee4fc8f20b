import { nodeFqdn } from '../grammar/validate.js';
import type { ExtraRecord, NodeEntry } from '../model.js';

/** A DNSRecord left out because its name is a node's, or a wildcard over one. */
export interface MetNode {
  readonly name: string;
  readonly source: string;
  readonly node: string;
}

/**
 * The DNSRecords apart from the nodes' names. CoreDNS answers a DNSRecord's template before the
 * nodes' hosts entries, so one naming a node, or a wildcard over one, would take that node's
 * name for the whole cluster: the node keeps it, and the record is left out of this CoreDNS
 * (not of the admin's records: in a zone a node's own name beats a wildcard).
 */
export function apartFromNodes(records: readonly ExtraRecord[], nodes: readonly NodeEntry[], domain: string): { readonly kept: readonly ExtraRecord[]; readonly met: readonly MetNode[] } {
  if (records.length === 0 || nodes.length === 0) return { kept: records, met: [] };
  // Matched against the names as given, not each node's FQDN made anew: a monitor recomputes this at every change of thousands of nodes.
  const names = new Set(nodes.map((n) => n.name));
  const suffix = `.${domain}`;
  const named = (name: string): string | undefined => {
    if (names.has(name)) return name;
    const short = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
    return short !== undefined && names.has(short) && nodeFqdn(short, domain) === name ? short : undefined;
  };
  const metBy = (record: ExtraRecord): string | undefined => {
    if (!record.name.startsWith('*.')) return named(record.name);
    // A wildcard covers any name under it: a node's FQDN (`N.<domain>`, or N itself when it ends in the domain) or its dotted name as given.
    const under = record.name.slice(1);
    const underInDomain = under.endsWith(suffix) ? under.slice(0, -suffix.length) : undefined;
    const covered = nodes.find((n) => n.name.endsWith(under) || (underInDomain !== undefined && n.name !== domain && !n.name.endsWith(suffix) && n.name.endsWith(underInDomain)))?.name;
    // Its apex too: the wildcard's block answers it NODATA (an empty name), before the node's hosts entry.
    return covered ?? named(record.name.slice(2));
  };
  const kept: ExtraRecord[] = [];
  const met: MetNode[] = [];
  for (const record of records) {
    const node = metBy(record);
    if (node === undefined) kept.push(record);
    else met.push({ name: record.name, source: record.source, node });
  }
  return { kept, met };
}

/**
 * The DNSRecords given to the admin's DNS: all but those naming a node itself, whose own
 * record in the admin's zone their update would replace. A wildcard over a node stays: in a
 * zone the node's own name answers before it.
 */
export function apartFromNodeNames(records: readonly ExtraRecord[], nodes: readonly NodeEntry[], domain: string): { readonly kept: readonly ExtraRecord[]; readonly met: readonly MetNode[] } {
  const met = apartFromNodes(records, nodes, domain).met.filter((m) => !m.name.startsWith('*.'));
  if (met.length === 0) return { kept: records, met };
  const out = new Set(met.map((m) => m.name));
  return { kept: records.filter((r) => !out.has(r.name)), met };
}
