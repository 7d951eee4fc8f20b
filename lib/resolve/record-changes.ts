import type { RecordSet } from '../model.js';

export interface RecordChange {
  readonly name: string;
  readonly from: readonly string[];
  readonly to: readonly string[];
}

type Addresses = Map<string, string[]>;

const namesOf = (set: RecordSet | undefined): Addresses => new Map((set?.names ?? []).map((n) => [n.name, [...n.v4, ...n.v6]]));
const nodesOf = (set: RecordSet | undefined): Addresses => new Map((set?.nodes ?? []).map((n) => [n.fqdn, [...n.v4, ...n.v6]]));

function changesBetween(a: Addresses, b: Addresses): RecordChange[] {
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
  const changes = [...changesBetween(namesOf(before), namesOf(after)), ...changesBetween(nodesOf(before), nodesOf(after))];
  return changes.length > LOGGED_CHANGES ? { changes: changes.slice(0, LOGGED_CHANGES), moreChanges: changes.length - LOGGED_CHANGES } : { changes };
}
