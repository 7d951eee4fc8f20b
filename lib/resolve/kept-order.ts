import { lowerBound } from './sorted.js';

/**
 * Items kept in one order from one record set to the next, by key. A change that replaces
 * items of keys already there (a Gateway's new address: the same names, new records) costs
 * a copy of the array and the replacements; only keys that come or go sort again. A key is
 * found by binary search in the order itself: an index of 25,000 keys would cost megabytes
 * and, built at the first change, tens of milliseconds of it.
 */
export class KeptOrder<T> {
  private order: readonly T[] = [];

  /** `compare` orders keys as `sort` orders their items. */
  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly compare: (a: string, b: string) => number,
    private readonly sort: (items: T[]) => T[] = (items) => items.sort((a, b) => compare(keyOf(a), keyOf(b))),
  ) {}

  /** Where the item of `key` is, or -1. */
  private indexOf(key: string): number {
    const at = lowerBound(this.order, (item) => this.compare(this.keyOf(item), key) < 0);
    const found = this.order[at];
    return found !== undefined && this.keyOf(found) === key ? at : -1;
  }

  get(key: string): T | undefined {
    const at = this.indexOf(key);
    return at < 0 ? undefined : this.order[at];
  }

  /** The items once each key of `changes` holds its value (undefined: none); the same array when nothing changed. */
  update(changes: ReadonlyMap<string, T | undefined>): readonly T[] {
    // From nothing every item is new: sorted once, not looked up in an empty order first.
    if (this.order.length === 0) return this.reset([...changes.values()].filter((item): item is T => item !== undefined));
    const real = [...changes].map(([key, item]) => ({ key, item, at: this.indexOf(key) })).filter(({ item, at }) => (at < 0 ? undefined : this.order[at]) !== item);
    if (real.length === 0) return this.order;
    if (real.every(({ item, at }) => item !== undefined && at >= 0)) {
      const order = [...this.order];
      for (const { item, at } of real) order[at] = item as T;
      return (this.order = order);
    }
    const changed = new Set(real.map(({ key }) => key));
    const kept = this.order.filter((item) => !changed.has(this.keyOf(item)));
    return this.reset([...kept, ...real.flatMap(({ item }) => (item === undefined ? [] : [item]))]);
  }

  /** Exactly `items`, sorted. */
  reset(items: T[]): readonly T[] {
    return (this.order = this.sort(items));
  }
}
