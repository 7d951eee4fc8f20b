/**
 * The reference cannot go stale: every flag a command's --help offers (the goldens of
 * test/golden/help, which help.test.ts keeps equal to the CLI) is documented in docs/commands.md.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';

const HELP = new URL('./golden/help/', import.meta.url);

test('every flag of every command is in docs/commands.md', async () => {
  const doc = await readFile(new URL('../docs/commands.md', import.meta.url), 'utf8');
  const missing: string[] = [];
  for (const file of (await readdir(HELP)).filter((f) => f.endsWith('.txt'))) {
    const flags = new Set([...(await readFile(new URL(file, HELP), 'utf8')).matchAll(/^\s+(--[a-z][a-z-]*)/gm)].map((m) => m[1] as string));
    for (const flag of flags) if (!doc.includes(`\`${flag}`)) missing.push(`${flag} (${file})`);
  }
  assert.equal(missing, []);
});

test.run();
