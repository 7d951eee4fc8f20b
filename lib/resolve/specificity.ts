import { labelCount } from '../grammar/validate.js';
import type { NameRecord } from '../model.js';
import { lowerBound } from './sorted.js';

/*
 * CoreDNS tries template blocks in order and the first match answers, so a record set lists
 * exact names first, then the deepest wildcard: the most specific one answers.
 */

/**
 * `.` → `\.` by split and join: one flat string. replaceAll leaves a string of many
 * concatenations: 356 bytes a match string where this is 52 (bench/heap-shapes.ts).
 */
const escapeDots = (text: string): string => text.split('.').join('\\.');

/** Query names arrive lower-cased with a trailing dot; a wildcard covers any depth, as in DNS. */
export function matchFor(name: string): { zone: string; match: string } {
  if (name.startsWith('*.')) {
    const zone = name.slice(2);
    return { zone, match: `^(?:[^.]+\\.)+${escapeDots(zone)}\\.$` };
  }
  return { zone: name, match: escapeDots(`^${name}.$`) };
}

/** The names `name` answers NODATA for in the types it has no records of: a wildcard's apex too, an empty name that exists (RFC 4592). */
export function emptyMatchFor(name: string): string {
  return name.startsWith('*.') ? `^(?:[^.]+\\.)*${escapeDots(name.slice(2))}\\.$` : matchFor(name).match;
}

interface Keyed {
  readonly wildcard: number;
  readonly depth: number;
  readonly name: string;
}

const keyOf = (name: string): Keyed => ({ wildcard: name.startsWith('*.') ? 1 : 0, depth: labelCount(name), name });
const byKey = (a: Keyed, b: Keyed): number => a.wildcard - b.wildcard || b.depth - a.depth || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Negative when `a` comes before `b`; 0 for one name. */
export const compareSpecificity = (a: string, b: string): number => byKey(keyOf(a), keyOf(b));

export function specificityOrder(names: readonly NameRecord[]): NameRecord[] {
  // Keyed once: a comparator that splits names costs more than the rest of a 25,000-name set.
  const keyed = names.map((n) => ({ n, key: keyOf(n.name) }));
  keyed.sort((a, b) => byKey(a.key, b.key));
  return keyed.map((k) => k.n);
}

/** Where `name` is or would go in `names` (in specificity order). */
function positionOf(names: readonly NameRecord[], name: string): number {
  const key = keyOf(name);
  return lowerBound(names, (n) => byKey(keyOf(n.name), key) < 0);
}

/** The record of `name` in `names` (in specificity order). */
export function findName(names: readonly NameRecord[], name: string): NameRecord | undefined {
  const found = names[positionOf(names, name)];
  return found?.name === name ? found : undefined;
}

/** Both lists in specificity order, as one; `few` is short, `many` is not copied when it is empty. */
export function mergeOrdered(many: readonly NameRecord[], few: readonly NameRecord[]): readonly NameRecord[] {
  if (few.length === 0) return many;
  const parts: (readonly NameRecord[])[] = [];
  let from = 0;
  for (const n of specificityOrder(few)) {
    const at = Math.max(from, positionOf(many, n.name));
    parts.push(many.slice(from, at), [n]);
    from = at;
  }
  parts.push(many.slice(from));
  return ([] as NameRecord[]).concat(...parts);
}
