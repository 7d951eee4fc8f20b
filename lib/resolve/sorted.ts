/** The first index of `items` (sorted) whose item is not `before` the one sought: where it is or would go. */
export function lowerBound<T>(items: readonly T[], before: (item: T) => boolean): number {
  let [low, high] = [0, items.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (before(items[mid] as T)) low = mid + 1;
    else high = mid;
  }
  return low;
}
