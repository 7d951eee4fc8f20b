import { objectWarn, type Warn } from './untrusted.js';

/** A value derived from API data, with the warnings deriving it gave. */
export interface Derived<T> {
  readonly value: T;
  readonly warnings: readonly (readonly [string, Record<string, unknown>])[];
}

export function derive<T>(compute: (warn: Warn) => T): Derived<T> {
  const warnings: [string, Record<string, unknown>][] = [];
  const value = compute((msg, fields) => warnings.push([msg, fields]));
  return { value, warnings };
}

/** Every computation reports every warning it has (the dedup logs only new ones), kept or not. */
export function replay<T>(derived: Derived<T>, warn: Warn): T {
  for (const [msg, fields] of derived.warnings) warn(msg, fields);
  return derived.value;
}

/** Element by element the same objects: how a kept derivation knows its inputs are unchanged. */
export const sameObjects = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * `view` kept per API object: an informer hands the same object until the API changes it, so
 * an event on one Gateway reads that Gateway again and no other.
 */
export function perObject<A, T>(view: (item: A, warn: Warn) => T): (item: A, warn: Warn) => T {
  const kept = new WeakMap<object, Derived<T>>();
  return (item, warn) => {
    if (typeof item !== 'object' || item === null) return view(item, warn);
    let derived = kept.get(item);
    if (derived === undefined) {
      derived = derive((w) => {
        const one = objectWarn(w);
        const value = view(item, one.warn);
        one.done();
        return value;
      });
      kept.set(item, derived);
    }
    return replay(derived, warn);
  };
}
