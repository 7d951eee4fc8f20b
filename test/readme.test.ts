/**
 * The README's offline tour runs as written, on a fresh clone: each command of its
 * "A minute, offline" block, with the exit code its comment says (0 when it says none).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { runLbdns } from './support/run-cli.js';

const README = new URL('../README.md', import.meta.url);

async function tourCommands(): Promise<{ line: string; args: string[]; code: number }[]> {
  const text = await readFile(README, 'utf8');
  const block = /## A minute, offline\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(text)?.[1];
  assert.ok(block, 'the README has an "A minute, offline" sh block');
  return block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [command = '', comment = ''] = line.split(/\s#\s/);
      const words = command.replace(/;\s*echo \$\?\s*$/, '').trim().split(/\s+/);
      return { line, args: words.slice(1), code: Number(/exit (\d)/.exec(comment)?.[1] ?? 0), program: words[0] };
    })
    .map(({ program, ...rest }) => {
      assert.is(program, 'lbdns', rest.line);
      return rest;
    });
}

test("every command of the README's offline tour runs as written, with the exit code it says", async () => {
  const commands = await tourCommands();
  assert.ok(commands.length >= 4, `${commands.length} commands`);
  for (const { line, args, code } of commands) {
    const r = await runLbdns(args);
    assert.is(r.code, code, `${line}\n${r.stderr}`);
    assert.ok(r.stdout.length > 0, `${line} prints something`);
  }
});

test.run();
