/**
 * Items kept in one order from one record set to the next, by key. A change that replaces
 * items of keys already there (a Gateway's new address: the same names, new records) costs
 * a copy of the array and the replacements; only keys that come or go sort again. The key
 * must decide the item's place: items of one key sort alike.
 */
export class KeptOrder<T> {
  /** Where each key is; made at the first update that replaces items, so a set built once never pays for it. */
  private positionIndex: Map<string, number> | undefined;
  private order: readonly T[] = [];

  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly sort: (items: T[]) => T[],
  ) {}

  private get positions(): Map<string, number> {
    this.positionIndex ??= new Map(this.order.map((item, i) => [this.keyOf(item), i]));
    return this.positionIndex;
  }

  get(key: string): T | undefined {
    const at = this.positions.get(key);
    return at === undefined ? undefined : this.order[at];
  }

  /** The items once each key of `changes` holds its value (undefined: none); the same array when nothing changed. */
  update(changes: ReadonlyMap<string, T | undefined>): readonly T[] {
    // From nothing every item is new: sorted once, not looked up in an empty order first.
    if (this.order.length === 0) return this.reset([...changes.values()].filter((item): item is T => item !== undefined));
    const real = [...changes].filter(([key, item]) => this.get(key) !== item);
    if (real.length === 0) return this.order;
    if (real.every(([key, item]) => item !== undefined && this.positions.has(key))) {
      const order = [...this.order];
      for (const [key, item] of real) order[this.positions.get(key) as number] = item as T;
      return (this.order = order);
    }
    const changed = new Map(real);
    const kept = this.order.filter((item) => !changed.has(this.keyOf(item)));
    return this.reset([...kept, ...real.flatMap(([, item]) => (item === undefined ? [] : [item]))]);
  }

  /** Exactly `items`, sorted. */
  reset(items: T[]): readonly T[] {
    this.positionIndex = undefined;
    return (this.order = this.sort(items));
  }
}
