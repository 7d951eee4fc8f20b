/**
 * The structured log: one JSON object a line, nothing a terminal would act on.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../lib/runtime/log.js';

function logged(msg: string, fields: Record<string, unknown>): { line: string; parsed: Record<string, unknown> } {
  let line = '';
  createLogger({ write: (chunk: string) => (line += chunk) }).warn(msg, fields);
  return { line, parsed: JSON.parse(line) as Record<string, unknown> };
}

test('a field read from the API with a C1 control or a bidi override is written as JSON escapes, and parses back to the value', () => {
  const value = 'geo\u009b31m\u202eUE\u001b[2J';
  const { line, parsed } = logged('a bad geo code', { value });
  assert.ok(/^[\x20-\x7e]*\n$/.test(line), line);
  assert.is(parsed.value, value);
});

test('a message past 2,000 characters is cut, and says so', () => {
  const { parsed } = logged(`x${'y'.repeat(10_000)}`, {});
  assert.match(String(parsed.msg), /… \(message cut at 2000 of 10001 characters\)$/);
});

test.run();
