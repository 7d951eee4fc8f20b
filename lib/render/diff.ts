import { structuredPatch } from 'diff';

/** GNU diff leaves out a range's length when it is 1, and names the line before an empty range. */
const range = (start: number, count: number): string => (count === 1 ? `${start}` : count === 0 ? `${start - 1},0` : `${start},${count}`);

/**
 * Unified diff of two texts with 3 lines of context, as `diff -u` prints it; '' when they are
 * equal. The `diff` package computes the hunks; only the header lines are lbdns's own (no
 * "Index:" line, no timestamps).
 */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  if (oldText === newText) return '';
  const patch = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context: 3 });
  const out = [`--- ${oldName}`, `+++ ${newName}`];
  for (const hunk of patch.hunks) {
    out.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines);
  }
  return `${out.join('\n')}\n`;
}
