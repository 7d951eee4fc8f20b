/**
 * `--diff` output is what `diff -u` prints, so admins read it as they read any patch. Each
 * case runs the machine's GNU diff on the same texts and compares everything after the two
 * header lines (which carry file names and times).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unifiedDiff } from '../lib/render/diff.js';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { builtinTemplate } from '../lib/render/templates.js';
import type { RawConfig } from '../lib/inputs/config.js';

let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lbdns-diff-'));
});

test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function gnuDiff(oldText: string, newText: string): string {
  const a = join(dir, 'old');
  const b = join(dir, 'new');
  writeFileSync(a, oldText);
  writeFileSync(b, newText);
  const r = spawnSync('diff', ['-u', a, b], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 1) throw new Error(`diff failed: ${r.stderr}`);
  return r.stdout;
}

const body = (d: string): string => d.split('\n').slice(2).join('\n');

function assertLikeGnu(oldText: string, newText: string): void {
  const ours = unifiedDiff(oldText, newText, 'old', 'new');
  assert.ok(ours.startsWith('--- old\n+++ new\n'), ours);
  assert.fixture(body(ours), body(gnuDiff(oldText, newText)));
}

function corefile(over: RawConfig = {}): string {
  const raw = { ...EXAMPLE_CONFIG, ...over };
  const spec = specFromConfig(raw, raw.upstreams ?? []);
  return renderCorefile(buildRecordSet(spec, new Map()).recordSet, builtinTemplate(), 'builtin');
}

const lines = (n: number, f: (i: number) => string): string => Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join('');

test('equal texts give no diff at all', () => {
  assert.is(unifiedDiff('a\nb\n', 'a\nb\n', 'old', 'new'), '');
});

test('one changed line, as diff -u prints it (a range of one line has no length)', () => {
  assertLikeGnu('a\n', 'b\n');
  assertLikeGnu('a\nb\nc\n', 'a\nB\nc\n');
});

test('a new file is all additions from line 0', () => {
  assertLikeGnu('', 'x\ny\n');
});

test('an emptied file is all deletions', () => {
  assertLikeGnu('x\ny\n', '');
});

test('changes far apart make separate hunks with three lines of context', () => {
  const old = lines(30, (i) => `line ${i}`);
  assertLikeGnu(old, old.replace('line 3\n', 'LINE 3\n').replace('line 25\n', 'LINE 25\n'));
});

test('changes six lines apart share one hunk, seven apart do not', () => {
  const old = lines(30, (i) => `line ${i}`);
  assertLikeGnu(old, old.replace('line 10\n', 'X\n').replace('line 17\n', 'Y\n'));
  assertLikeGnu(old, old.replace('line 10\n', 'X\n').replace('line 18\n', 'Y\n'));
});

test('a missing newline at the end is shown as diff -u shows it', () => {
  assertLikeGnu('a\nb', 'a\nb\n');
  assertLikeGnu('a\nb\n', 'a\nc');
  assertLikeGnu('a\nb', 'a\nc');
  assertLikeGnu('x\na\nb', 'y\na\nb');
});

test('a Corefile whose LB gains an address', () => {
  const before = corefile();
  const after = corefile({ loadBalancers: { ...EXAMPLE_CONFIG.loadBalancers, api: ['10.0.0.10', '10.0.0.11', '10.0.0.12', 'fd00:10::10'] } });
  assertLikeGnu(before, after);
  assertLikeGnu(after, before);
});

test('a Corefile whose cluster gains a node', () => {
  const before = corefile();
  const after = corefile({ nodes: { ...EXAMPLE_CONFIG.nodes, 'master-3': ['10.0.0.8'] } });
  assertLikeGnu(before, after);
  assertLikeGnu(after, before);
});

test('a Corefile whose TTL changes on every record', () => {
  assertLikeGnu(corefile(), corefile({ ttl: 30 }));
});

test('a Corefile that goes from control plane to bootstrap', () => {
  assertLikeGnu(corefile(), corefile({ role: 'bootstrap' }));
  assertLikeGnu(corefile({ role: 'bootstrap' }), corefile());
});

test('a Corefile edited by hand, compared with the rendered one', () => {
  const rendered = corefile();
  const edited = `# hand-edited\n${rendered.replace('    cache 30\n', '    cache 300\n    log\n').replace(/\n$/, '')}`;
  assertLikeGnu(edited, rendered);
});

test('a 20,000-line Corefile against a missing file: every line added, in one hunk, within 2 s', () => {
  const text = lines(20_000, (i) => `        10.${i >> 16}.${(i >> 8) & 255}.${i & 255} node-${i} node-${i}.c1.example.com`);
  const started = performance.now();
  const d = unifiedDiff('', text, 'old', 'new');
  const elapsed = performance.now() - started;
  const body = d.split('\n');
  assert.is(body[2], '@@ -0,0 +1,20000 @@');
  assert.is(body.filter((l) => l.startsWith('+')).length, 20_001);
  assert.ok(elapsed < 2000, `took ${elapsed.toFixed(0)} ms`);
});

test.run();
