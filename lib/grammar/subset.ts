import { ValidationError } from '../errors.js';

/**
 * A flag's comma-separated subset of `allowed` (`--names api,apps`): each item one of them,
 * at least one; given back in `allowed`'s order, each once. `unknown` says what an item
 * outside it is not.
 */
export function parseSubset<T extends string>(flag: string, value: string, allowed: readonly T[], unknown: string): T[] {
  const items = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const hint = `use a comma-separated subset of ${allowed.join(',')}`;
  for (const n of items) if (!(allowed as readonly string[]).includes(n)) throw new ValidationError(flag, n, unknown, hint);
  if (items.length === 0) throw new ValidationError(flag, value, 'is empty', hint);
  return allowed.filter((n) => items.includes(n));
}
