import { LB_NAMES, type LbName } from '../model.js';

/** A served name's source reduced to its kind, for metric labels: `lb`, `dnsrecord`, `dnspolicy`, `dnsrecord.kuadrant.io`. */
export function sourceKind(source: string): string {
  if ((LB_NAMES as readonly string[]).includes(source as LbName)) return 'lb';
  const slash = source.indexOf('/');
  return slash < 0 ? source : source.slice(0, slash);
}

/** How many names each kind of source serves; counted by source first, as one source serves many names. */
export function countByKind(sources: Iterable<string>): Map<string, number> {
  const bySource = new Map<string, number>();
  for (const source of sources) bySource.set(source, (bySource.get(source) ?? 0) + 1);
  const byKind = new Map<string, number>();
  for (const [source, count] of bySource) {
    const kind = sourceKind(source);
    byKind.set(kind, (byKind.get(kind) ?? 0) + count);
  }
  return byKind;
}
