import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonSelector, type Selection } from '../lib/kube/json-select.js';

/** Feeds `text` in pieces of `size` bytes (the last one shorter). */
function select(text: string, selection: Selection, size = Infinity): unknown {
  const bytes = Buffer.from(text, 'utf8');
  const selector = new JsonSelector(selection);
  const step = Math.min(size, bytes.length) || 1;
  for (let i = 0; i < bytes.length; i += step) selector.write(bytes.subarray(i, i + step));
  return selector.end();
}

/** Every way to cut `text` in two, and one byte at a time: the same result each time. */
function selectEverySplit(text: string, selection: Selection): unknown {
  const bytes = Buffer.from(text, 'utf8');
  const whole = select(text, selection);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const selector = new JsonSelector(selection);
    selector.write(bytes.subarray(0, cut));
    selector.write(bytes.subarray(cut));
    assert.equal(selector.end(), whole, `cut at byte ${cut}`);
  }
  assert.equal(select(text, selection, 1), whole, 'one byte at a time');
  return whole;
}

const NODE_SELECTION: Selection = { metadata: { resourceVersion: true, continue: true }, items: { '*': { metadata: { name: true, resourceVersion: true }, status: { addresses: true } } } };

const nodeList = JSON.stringify({
  kind: 'NodeList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'tok\\en"x' },
  items: [
    {
      metadata: { name: 'node-0', resourceVersion: '40', labels: { 'a\\"b': 'c}]' } },
      status: { images: [{ names: ['x@sha256:"}{', 'q\\'], sizeBytes: 1.5e9 }], addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: 'n0' }] },
    },
    { metadata: { name: 'nöde-1', resourceVersion: '41' }, spec: null, status: { addresses: [] } },
  ],
});

test('only the selected parts of a document are built, whole at every split', () => {
  assert.equal(selectEverySplit(nodeList, NODE_SELECTION), {
    metadata: { resourceVersion: '42', continue: 'tok\\en"x' },
    items: [
      { metadata: { name: 'node-0', resourceVersion: '40' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: 'n0' }] } },
      { metadata: { name: 'nöde-1', resourceVersion: '41' }, status: { addresses: [] } },
    ],
  });
});

test('the selection true builds what JSON.parse does', () => {
  const text = ' {"a": [1, -2.5e3, true, false, null, "\\u00e9\\\\", {"b": {}}, []], "c\\"d": 7 } ';
  assert.equal(selectEverySplit(text, true), JSON.parse(text));
  assert.equal(select('12', true), 12);
});

test('a value that does not fit its selection is built whole, so it can still be reported', () => {
  const text = JSON.stringify({ items: [{ metadata: 'not an object', status: { addresses: 'none' } }, 7, 'x', [1, 2]] });
  assert.equal(selectEverySplit(text, NODE_SELECTION), { items: [{ metadata: 'not an object', status: { addresses: 'none' } }, 7, 'x', [1, 2]] });
  assert.equal(select(JSON.stringify({ items: { a: 1 } }), NODE_SELECTION), { items: { a: 1 } });
});

test('a key with escapes selects like the key it spells', () => {
  assert.equal(selectEverySplit('{"\\u006detadata": {"name": "n"}}', { metadata: { name: true } }), { metadata: { name: 'n' } });
});

test('a truncated or malformed document is refused', () => {
  const full = Buffer.from(nodeList);
  for (const cut of [1, 20, full.length - 1]) {
    const selector = new JsonSelector(NODE_SELECTION);
    selector.write(full.subarray(0, cut));
    assert.throws(() => selector.end(), /ends early/);
  }
  assert.throws(() => select('{"metadata": {"name": tru}}', { metadata: { name: true } }), /invalid JSON/);
  assert.throws(() => select('{"a" 1}', true), /invalid JSON/);
  assert.throws(() => select('{"a": 1} x', { a: true }), /end of the document/);
});

test.run();
