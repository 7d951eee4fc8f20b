import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Backoff } from '../lib/kube/backoff.js';

test('each failure in a row doubles the delay up to the cap; a success starts over', () => {
  const backoff = new Backoff(() => undefined, { minMs: 100, maxMs: 350 });
  assert.equal([backoff.failed(), backoff.failed(), backoff.failed(), backoff.failed()], [100, 200, 350, 350]);
  backoff.succeeded();
  assert.is(backoff.failed(), 100);
  backoff.cancel();
});

test('jitter spreads a delay by at most the given ratio either way', () => {
  for (let i = 0; i < 50; i++) {
    const backoff = new Backoff(() => undefined, { minMs: 1000, maxMs: 1000, jitter: 0.2 });
    const delay = backoff.failed();
    backoff.cancel();
    assert.ok(delay >= 800 && delay <= 1200, String(delay));
  }
});

test('the retry runs once after the delay; a later failure replaces the pending one', async () => {
  let runs = 0;
  const backoff = new Backoff(() => runs++, { minMs: 20, maxMs: 20 });
  backoff.failed();
  backoff.failed();
  await new Promise((r) => setTimeout(r, 80));
  assert.is(runs, 1);
});

test('a cancelled retry never runs', async () => {
  let runs = 0;
  const backoff = new Backoff(() => runs++, { minMs: 10, maxMs: 10 });
  backoff.failed();
  backoff.cancel();
  await new Promise((r) => setTimeout(r, 40));
  assert.is(runs, 0);
});

test.run();
