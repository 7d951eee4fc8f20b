import { LB_NAMES, type LbName } from '../model.js';

/** A served name's source reduced to its kind, for metric labels: `lb`, `dnsrecord`, `dnspolicy`, `dnsrecord.kuadrant.io`. */
export function sourceKind(source: string): string {
  if ((LB_NAMES as readonly string[]).includes(source as LbName)) return 'lb';
  const slash = source.indexOf('/');
  return slash < 0 ? source : source.slice(0, slash);
}

/**
 * How many names each kind of source serves. Names of one kind come in runs (one source serves
 * many names), so a source under the kind before it is counted without slicing its kind out
 * again: this runs over every Gateway name whenever the names served change.
 */
export function countByKind(names: readonly { readonly source: string }[]): Map<string, number> {
  const byKind = new Map<string, number>();
  let kind = 'lb';
  for (const { source } of names) {
    if (kind === 'lb' || source.charCodeAt(kind.length) !== 0x2f || !source.startsWith(kind)) kind = sourceKind(source);
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
  }
  return byKind;
}

/** What a record set serves, for the metrics: names per source kind, and addresses. */
export interface ServedTotals {
  readonly names: ReadonlyMap<string, number>;
  readonly addresses: number;
}

/** A record set's totals: the Corefile's addresses and the Gateway zone files' apart, as the metrics give them. */
export interface RecordSetTotals extends ServedTotals {
  readonly gatewayAddresses: number;
}

/** The totals of the Corefile's names and of the Gateway names (disjoint lists). */
export function sumTotals(corefile: ServedTotals, gateway: ServedTotals): RecordSetTotals {
  const names = new Map(corefile.names);
  for (const [kind, count] of gateway.names) names.set(kind, (names.get(kind) ?? 0) + count);
  return { names, addresses: corefile.addresses, gatewayAddresses: gateway.addresses };
}
