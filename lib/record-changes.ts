import type { RecordSet } from './model.js';

export interface RecordChange {
  readonly name: string;
  readonly from: readonly string[];
  readonly to: readonly string[];
}

function addressesByName(set: RecordSet | undefined, part: 'names' | 'nodes'): Map<string, string[]> {
  const map = new Map<string, string[]>();
  if (part === 'names') for (const n of set?.names ?? []) map.set(n.name, [...n.v4, ...n.v6]);
  else for (const n of set?.nodes ?? []) map.set(n.fqdn, [...n.v4, ...n.v6]);
  return map;
}

function changesOf(before: RecordSet | undefined, after: RecordSet, part: 'names' | 'nodes'): RecordChange[] {
  const a = addressesByName(before, part);
  const b = addressesByName(after, part);
  const changes: RecordChange[] = [];
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const from = a.get(name) ?? [];
    const to = b.get(name) ?? [];
    if (from.join(' ') !== to.join(' ')) changes.push({ name, from, to });
  }
  return changes.sort((x, y) => (x.name < y.name ? -1 : 1));
}

/**
 * At most this many changes go in one log line. The first Corefile of a cluster with 5,000
 * Nodes changes 5,000 names: one line of 300 kB that log pipelines cut or drop.
 */
export const LOGGED_CHANGES = 20;

export interface ChangeLog {
  /** The first LOGGED_CHANGES changes, by name. */
  readonly changes: readonly RecordChange[];
  /** How many more there were, when there were. */
  readonly moreChanges?: number;
}

/**
 * Which served names changed from which addresses to which: what the admin reads in the log.
 * The LB and DNSRecord names come before the nodes', so a cut never hides an LB's change.
 */
export function recordChanges(before: RecordSet | undefined, after: RecordSet): ChangeLog {
  const changes = [...changesOf(before, after, 'names'), ...changesOf(before, after, 'nodes')];
  return changes.length > LOGGED_CHANGES ? { changes: changes.slice(0, LOGGED_CHANGES), moreChanges: changes.length - LOGGED_CHANGES } : { changes };
}
