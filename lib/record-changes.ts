import type { RecordSet } from './model.js';

export interface RecordChange {
  readonly name: string;
  readonly from: readonly string[];
  readonly to: readonly string[];
}

function addressesByName(set: RecordSet | undefined): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const n of set?.names ?? []) map.set(n.name, [...n.v4, ...n.v6]);
  for (const n of set?.nodes ?? []) map.set(n.fqdn, [...n.v4, ...n.v6]);
  return map;
}

/** Which served names changed from which addresses to which: what the admin reads in the log. */
export function recordChanges(before: RecordSet | undefined, after: RecordSet): RecordChange[] {
  const a = addressesByName(before);
  const b = addressesByName(after);
  const changes: RecordChange[] = [];
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const from = a.get(name) ?? [];
    const to = b.get(name) ?? [];
    if (from.join(' ') !== to.join(' ')) changes.push({ name, from, to });
  }
  return changes.sort((x, y) => (x.name < y.name ? -1 : 1));
}
