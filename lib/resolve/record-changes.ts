import type { NameRecord, RecordSet } from '../model.js';
import { compareSpecificity } from './specificity.js';

export interface RecordChange {
  readonly name: string;
  readonly from: readonly string[];
  readonly to: readonly string[];
}

interface Served {
  readonly v4: readonly string[];
  readonly v6: readonly string[];
}

const same = (x: readonly string[], y: readonly string[]): boolean => x.length === y.length && x.every((ip, i) => ip === y[i]);
const addresses = (s: Served | undefined): string[] => (s === undefined ? [] : [...s.v4, ...s.v6]);

// A record set is compared twice, as the new one and then as the previous one: its node index is kept with it.
const nodeIndexes = new WeakMap<RecordSet, ReadonlyMap<string, Served>>();
function nodesOf(set: RecordSet | undefined): ReadonlyMap<string, Served> {
  if (set === undefined) return new Map();
  let nodes = nodeIndexes.get(set);
  if (nodes === undefined) nodeIndexes.set(set, (nodes = new Map(set.nodes.map((n) => [n.fqdn, n]))));
  return nodes;
}

/** Both lists are in specificity order (record-set.ts), so one walk pairs them; kept records are skipped by identity. */
function namesBetween(a: readonly NameRecord[], b: readonly NameRecord[]): RecordChange[] {
  const changes: RecordChange[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    const [x, y] = [a[i], b[j]];
    if (x === y) {
      i++;
      j++;
      continue;
    }
    const order = x === undefined ? 1 : y === undefined ? -1 : x.name === y.name ? 0 : compareSpecificity(x.name, y.name);
    if (order < 0) changes.push({ name: (x as NameRecord).name, from: addresses(x), to: [] });
    else if (order > 0) changes.push({ name: (y as NameRecord).name, from: [], to: addresses(y) });
    else if (!same((x as NameRecord).v4, (y as NameRecord).v4) || !same((x as NameRecord).v6, (y as NameRecord).v6)) changes.push({ name: (x as NameRecord).name, from: addresses(x), to: addresses(y) });
    if (order <= 0) i++;
    if (order >= 0) j++;
  }
  return changes.sort((x, y) => (x.name < y.name ? -1 : 1));
}

function changesBetween(a: ReadonlyMap<string, Served>, b: ReadonlyMap<string, Served>): RecordChange[] {
  const changes: RecordChange[] = [];
  for (const [name, x] of a) {
    const y = b.get(name);
    if (y !== x && (y === undefined || !same(x.v4, y.v4) || !same(x.v6, y.v6))) changes.push({ name, from: addresses(x), to: addresses(y) });
  }
  for (const [name, y] of b) if (!a.has(name)) changes.push({ name, from: [], to: addresses(y) });
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
  const changes = [...namesBetween(before?.names ?? [], after.names), ...changesBetween(nodesOf(before), nodesOf(after))];
  return changes.length > LOGGED_CHANGES ? { changes: changes.slice(0, LOGGED_CHANGES), moreChanges: changes.length - LOGGED_CHANGES } : { changes };
}
