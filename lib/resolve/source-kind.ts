import { LB_NAMES, type LbName } from '../model.js';

/** A served name's source reduced to its kind, for metric labels: `lb`, `dnsrecord`, `dnspolicy`, `dnsrecord.kuadrant.io`. */
export function sourceKind(source: string): string {
  if ((LB_NAMES as readonly string[]).includes(source as LbName)) return 'lb';
  const slash = source.indexOf('/');
  return slash < 0 ? source : source.slice(0, slash);
}
