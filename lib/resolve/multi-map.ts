/**
 * Key → distinct values, where nearly every key has one (a name's askers, a name's readers): a
 * lone value is held as itself, not in an array of one, which at 10,000 Gateway hosts cost the
 * monitor 56 bytes a name in each of two indexes (bench/RESULTS.md). Values are never arrays.
 */
export class MultiMap<K, V> {
  private readonly map = new Map<K, V | V[]>();

  add(key: K, value: V): void {
    const held = this.map.get(key);
    if (held === undefined) this.map.set(key, value);
    else if (!Array.isArray(held)) {
      if (held !== value) this.map.set(key, [held, value]);
    } else if (!held.includes(value)) held.push(value);
  }

  /** Whether `key` held `value`. */
  delete(key: K, value: V): boolean {
    const held = this.map.get(key);
    if (held === value) return this.map.delete(key);
    if (!Array.isArray(held)) return false;
    const at = held.indexOf(value);
    if (at < 0) return false;
    held.splice(at, 1);
    if (held.length === 1) this.map.set(key, held[0] as V);
    return true;
  }

  /** The values under `key`, in a new array: to read, not to keep. */
  get(key: K): V[] {
    const held = this.map.get(key);
    return held === undefined ? [] : Array.isArray(held) ? [...held] : [held];
  }

  deleteAll(key: K): void {
    this.map.delete(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  clear(): void {
    this.map.clear();
  }
}
