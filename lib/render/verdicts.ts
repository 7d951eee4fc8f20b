/**
 * What a check decided about a text, kept by that text: each render checks every regex and
 * answer again, and one Gateway's change leaves the others as they were. A bounded number, so
 * that no input grows the memory without end. Each text is kept as a copy: a token is a slice
 * of the Corefile it was read from, and as a key it would keep that whole file alive.
 */
export class Verdicts<V> {
  private readonly kept = new Map<string, V>();

  constructor(private readonly limit: number) {}

  /** The verdict kept for `text`, else `decide`'s, kept; one that throws keeps nothing. */
  of(text: string, decide: () => V): V {
    const known = this.kept.get(text);
    if (known !== undefined) return known;
    const verdict = decide();
    if (this.kept.size >= this.limit) this.kept.clear();
    // UTF-16 both ways: an exact copy of any string, lone surrogates included.
    this.kept.set(Buffer.from(text, 'utf16le').toString('utf16le'), verdict);
    return verdict;
  }
}
