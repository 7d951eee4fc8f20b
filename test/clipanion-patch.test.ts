import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runInThisContext } from 'node:vm';
import type { Cli } from 'clipanion';
import { CLIPANION_CORE, patchClipanionCore } from '../scripts/clipanion-patch.mjs';
import { buildCli, COMMANDS } from '../cmd/cli.js';

interface Machine {
  nodes: unknown[];
}
interface Core {
  makeAnyOfMachine(machines: Machine[]): Machine;
  simplifyMachine(machine: Machine): void;
}

const require = createRequire(import.meta.url);
const corePath = require.resolve('clipanion/lib/core.js');
const original = require(corePath) as Core;

/** clipanion's core.js as the bundle carries it, loaded beside the original so its own requires resolve. */
function loadPatched(): Core {
  const module = { exports: {} };
  const wrapper = runInThisContext(`(function (exports, require, module) {${patchClipanionCore(readFileSync(corePath, 'utf8'))}\n})`, { filename: corePath }) as (e: unknown, r: NodeRequire, m: unknown) => void;
  wrapper(module.exports, createRequire(corePath), module);
  return module.exports as Core;
}

/** The machine clipanion simplifies for a command line, before simplifying it. */
function unsimplified(cli: Cli): Machine {
  const builders = (cli as unknown as { builder: { builders: { compile(): { machine: Machine } }[] } }).builder.builders;
  return original.makeAnyOfMachine(builders.map((b) => b.compile().machine));
}

test('the bundler edits the clipanion core.js this package installs', () => {
  assert.ok(CLIPANION_CORE.test(corePath), corePath);
  assert.is.not(patchClipanionCore(readFileSync(corePath, 'utf8')), readFileSync(corePath, 'utf8'));
});

test('a clipanion core.js whose text changed is refused, naming what is missing', () => {
  assert.throws(() => patchClipanionCore('module.exports = {};'), /clipanion\/lib\/core\.js has 0 copies of/);
});

const commandLines = [...COMMANDS.flatMap((c) => (c.paths ?? []).map((p) => [...p, '--help'])), ['--help']];
for (const argv of commandLines) {
  test(`the patched simplifyMachine builds the same machine as clipanion's for: lbdns ${argv.join(' ')}`, () => {
    const patched = loadPatched();
    // One clone for both: simplifyMachine compares tests by identity, which a single structuredClone keeps.
    const [mine, theirs] = structuredClone([unsimplified(buildCli(argv)), unsimplified(buildCli(argv))]);
    patched.simplifyMachine(mine);
    original.simplifyMachine(theirs);
    assert.ok(mine.nodes.length > 10);
    assert.equal(mine, theirs);
  });
}

test.run();
