/**
 * The help text of every command, byte for byte, so a change to a flag shows in review.
 * After changing a flag or a description, regenerate the goldens and review their diff:
 *   LBDNS_UPDATE_GOLDEN=1 node test/run.mjs 'help\.test\.ts$'
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../cmd/cli.js';
import { PLACEHOLDERS } from '../cmd/help.js';
import { runLbdns } from './support/run-cli.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/help/', import.meta.url));
const UPDATE = process.env.LBDNS_UPDATE_GOLDEN === '1';
const REGENERATE = "LBDNS_UPDATE_GOLDEN=1 node test/run.mjs 'help\\.test\\.ts$'";

const HELP_LINES: [string, string[]][] = [['lbdns', ['--help']], ...COMMANDS.map((c): [string, string[]] => [c.paths[0]!.join('-'), [...c.paths[0]!, '--help']])];

async function helpOf(argv: string[]): Promise<string> {
  const r = await runLbdns(argv);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stderr, '');
  return r.stdout;
}

for (const [name, argv] of HELP_LINES) {
  test(`lbdns ${argv.join(' ')} prints test/golden/help/${name}.txt`, async () => {
    const actual = await helpOf(argv);
    const path = join(GOLDEN_DIR, `${name}.txt`);
    if (UPDATE) await writeFile(path, actual);
    const expected = await readFile(path, 'utf8').catch(() => '');
    if (actual !== expected) {
      assert.fixture(actual, expected, `lbdns ${argv.join(' ')} differs from test/golden/help/${name}.txt; if the change is meant, run\n  ${REGENERATE}\nand review the diff`);
    }
  });
}

for (const [name, argv] of HELP_LINES) {
  test(`lbdns ${argv.join(' ')} names every value and never prints clipanion's #0`, async () => {
    const text = await helpOf(argv);
    assert.not.match(text, /#\d/);
    assert.not.match(text, / VALUE\b/, `${name}: a flag without an entry in PLACEHOLDERS (cmd/help.ts)`);
  });
}

test('the top-level help fits one screen of 80 columns and 24 lines and says where to start', async () => {
  const text = await helpOf(['--help']);
  const lines = text.trimEnd().split('\n');
  assert.ok(lines.length <= 24, `${lines.length} lines`);
  for (const line of lines) assert.ok(line.length <= 80, line);
  assert.match(text, /Start here:.*\n\s+\$ lbdns print-records --example/);
});

test('-h prints the same help as --help', async () => {
  assert.is(await helpOf(['-h']), await helpOf(['--help']));
  assert.is(await helpOf(['display', '-h']), await helpOf(['display', '--help']));
});

test('every command help groups its options and lists exit code 0, 1 and 2 at least', async () => {
  for (const c of COMMANDS) {
    const text = await helpOf([...c.paths[0]!, '--help']);
    for (const heading of ['Local inputs', 'Cluster', 'Exit codes:']) assert.ok(text.includes(heading), `${c.paths[0]!.join(' ')}: ${heading}`);
    for (const code of [0, 1, 2]) assert.match(text, new RegExp(`\\n  ${code}  \\S`), `${c.paths[0]!.join(' ')}: exit ${code}`);
  }
});

test('placeholders are upper case or a list of literal values, and none is unused', async () => {
  const texts = await Promise.all(COMMANDS.map((c) => helpOf([...c.paths[0]!, '--help'])));
  for (const [flag, value] of Object.entries(PLACEHOLDERS)) {
    assert.match(value, /^([A-Z][A-Z/=:|[\]]*|[a-z-]+(\|[a-z-]+)+)$/, flag);
    assert.ok(texts.some((t) => t.includes(`  ${flag} ${value}`)), `${flag} is in PLACEHOLDERS but no command has it`);
  }
});

test("lbdns --version prints package.json's version on one line", async () => {
  const r = await runLbdns(['--version']);
  const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.is(r.code, 0);
  assert.is(r.stdout, `${version}\n`);
});

test.run();
