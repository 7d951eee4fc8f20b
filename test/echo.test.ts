/**
 * What lbdns echoes of its input: bounded, escaped, reason kept in view. Every message that
 * shows a value goes through quote(); the CLI prints every message through printable().
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, ECHO_LIMIT, failureMessage, printable, quote } from '../lib/errors.js';
import { endpointFromApi } from '../lib/sources/untrusted.js';
import { runLbdns } from './support/run-cli.js';

const CLUSTER = ['--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2'];

test('a string longer than the echo limit is cut there and its whole length said', () => {
  const shown = quote('x'.repeat(1_000_000));
  assert.is(shown, `"${'x'.repeat(ECHO_LIMIT)}…" (1000000 characters)`);
});

test('control and non-ASCII characters are escaped, never echoed raw', () => {
  assert.is(quote('c1\u001b[2J\n\r\t\u0000K\u212a'), '"c1\\u001b[2J\\n\\r\\t\\u0000K\\u212a"');
});

test('a value that is not a string is shown as JSON, NaN as NaN', () => {
  assert.is(quote(['a', 1]), '["a",1]');
  assert.is(quote(NaN), 'NaN');
  assert.is(quote(null), 'null');
});

test('a structure of shared references is described, not expanded', () => {
  let bomb: unknown = ['lol'];
  for (let i = 0; i < 30; i++) bomb = Array(9).fill(bomb);
  const started = performance.now();
  assert.is(quote(bomb), '[a list of 9 items]');
  assert.ok(performance.now() - started < 100);
});

test('a printed message keeps no control character, newlines included, and no more than 2,000 characters', () => {
  const line = printable(`reason first:\n${'\u001b[31m\r'.repeat(1000)}`);
  assert.not.match(line, /[\u0000-\u001f\u007f-\u009f]/);
  assert.match(line, /^reason first:\\u000a/);
  assert.match(line, /… \(message cut at 2000 of \d+ characters\)$/);
});

test("an error's details are lines of their own below its message, each escaped", () => {
  const message = failureMessage(new ConfigError('refused:', { details: ['a: bad', 'b: worse\nlbdns: all fine'] }), false);
  assert.is(message, 'refused:\n  a: bad\n  b: worse\\u000albdns: all fine');
});

test('a --config path holding a newline is printed on one line', async () => {
  const r = await runLbdns(['render-corefile', '--config', '/nonexistent/evil\nlbdns: FAKE ok.yaml', ...CLUSTER]);
  assert.is(r.code, 2);
  assert.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
});

test('an error that is not one of lbdns is printed as one line, without its stack', () => {
  const message = failureMessage(new RangeError('Invalid string length'), false);
  assert.is(message, 'internal error (RangeError: Invalid string length); please report it');
});

test('a huge --domain gets a message of a few hundred characters, reason included', async () => {
  const r = await runLbdns(['render-corefile', '--domain', `${'a'.repeat(100_000)}.example.test`, ...CLUSTER]);
  assert.is(r.code, 2);
  assert.ok(r.stderr.length < 1000, `${r.stderr.length} characters`);
  assert.match(r.stderr, /\(100013 characters\) (has an invalid label|is longer than 253 characters)/);
});

test('escape sequences in a --domain do not reach the terminal', async () => {
  const r = await runLbdns(['render-corefile', '--domain', 'c1\u001b[2J\u001b[31mRED.example.test', ...CLUSTER]);
  assert.is(r.code, 2);
  assert.not.match(r.stderr, /\u001b/);
  assert.match(r.stderr, /has an invalid label "c1\\u001b\[2j\\u001b\[31mred"/);
});

test('a value from the API is echoed bounded in the warning and in its log fields', () => {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  endpointFromApi(`${'b'.repeat(50_000)}\u001b.example.net`, 'service x/y status', (msg, fields) => warnings.push({ msg, fields }));
  assert.is(warnings.length, 1);
  assert.ok((warnings[0]?.msg.length ?? 0) < 600, warnings[0]?.msg);
  assert.match(String(warnings[0]?.fields.value), /…" \(50013 characters\)$/);
});

async function withTemplate(mode: number, body: (path: string, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-echo-'));
  try {
    const path = join(dir, 'custom.eta');
    await writeFile(path, '. {\n    forward . <%= it.upstreams.join(" ") %>\n}\n');
    await chmod(path, mode);
    await body(path, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a template its group may write is refused: it is code lbdns runs', async () => {
  await withTemplate(0o664, async (path, dir) => {
    const r = await runLbdns(['render-corefile', '--domain', 'c1.example.com', ...CLUSTER, '--template', path, '--out', join(dir, 'Corefile')]);
    assert.is(r.code, 2);
    assert.match(r.stderr, /--template ".*custom\.eta": is writable by its group or by others \(mode 0664\)/);
    assert.equal(await readdir(dir), ['custom.eta']);
  });
});

test('a template owned by another user is refused', async () => {
  if (process.getuid?.() !== 0) assert.unreachable('this test needs root: only root can give a file away');
  await withTemplate(0o644, async (path, dir) => {
    await chown(path, 4242, 4242);
    const r = await runLbdns(['render-corefile', '--domain', 'c1.example.com', ...CLUSTER, '--template', path, '--out', join(dir, 'Corefile')]);
    assert.is(r.code, 2);
    assert.match(r.stderr, /is owned by uid 4242, neither root nor the user lbdns runs as/);
  });
});

test('a template only its owner may write renders', async () => {
  await withTemplate(0o644, async (path, dir) => {
    const r = await runLbdns(['render-corefile', '--domain', 'c1.example.com', ...CLUSTER, '--template', path, '--out', join(dir, 'Corefile')]);
    assert.is(r.code, 0, r.stderr);
  });
});

test.run();
