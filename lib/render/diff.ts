type Op = { kind: ' ' | '-' | '+'; line: string };

/** Myers' O(ND) shortest edit script over lines: Corefiles with thousands of node lines differ in a few. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  const max = a.length + b.length;
  const v = new Map<number, number>([[1, 0]]);
  const trace: Map<number, number>[] = [];
  outer: for (let d = 0; d <= max; d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1));
      let x = down ? (v.get(k + 1) ?? 0) : (v.get(k - 1) ?? 0) + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) {
        x++;
        y++;
      }
      v.set(k, x);
      if (x >= a.length && y >= b.length) break outer;
    }
  }
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d] as Map<number, number>;
    const k = x - y;
    const down = k === -d || (k !== d && (vd.get(k - 1) ?? -1) < (vd.get(k + 1) ?? -1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = vd.get(prevK) ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) ops.push({ kind: ' ', line: a[--x] as string }) && y--;
    if (d > 0) {
      if (down) ops.push({ kind: '+', line: b[--y] as string });
      else ops.push({ kind: '-', line: a[--x] as string });
    }
  }
  return ops.reverse();
}

/** GNU diff leaves out a range's length when it is 1. */
const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`);

/** Unified diff of two texts with 3 lines of context; '' when they are equal. */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  if (oldText === newText) return '';
  // A last line without its newline is a different line, as in GNU diff, which marks it so.
  const split = (t: string) => {
    if (t === '') return [];
    const lines = t.replace(/\n$/, '').split('\n');
    if (!t.endsWith('\n')) lines.push(`${lines.pop() ?? ''}\n\\ No newline at end of file`);
    return lines;
  };
  const ops = editScript(split(oldText), split(newText));
  const context = 3;
  const changed = ops.flatMap((o, i) => (o.kind === ' ' ? [] : [i]));
  const hunks: [number, number][] = [];
  for (const i of changed) {
    const last = hunks.at(-1);
    if (last && i - last[1] <= 2 * context + 1) last[1] = i;
    else hunks.push([i, i]);
  }
  const out = [`--- ${oldName}`, `+++ ${newName}`];
  for (const [first, last] of hunks) {
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length, last + context + 1);
    const before = ops.slice(0, from);
    const hunk = ops.slice(from, to);
    const oCount = hunk.filter((o) => o.kind !== '+').length;
    const nCount = hunk.filter((o) => o.kind !== '-').length;
    const oStart = before.filter((o) => o.kind !== '+').length + (oCount === 0 ? 0 : 1);
    const nStart = before.filter((o) => o.kind !== '-').length + (nCount === 0 ? 0 : 1);
    out.push(`@@ -${range(oStart, oCount)} +${range(nStart, nCount)} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
  }
  return `${out.join('\n')}\n`;
}
