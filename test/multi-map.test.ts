import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MultiMap } from '../lib/resolve/multi-map.js';

test('a key holds each value it was given once, in the order given', () => {
  const m = new MultiMap<string, string>();
  for (const v of ['a', 'b', 'a', 'c']) m.add('k', v);
  assert.equal(m.get('k'), ['a', 'b', 'c']);
});

test('a key whose values are all deleted is gone; one with a value left holds it', () => {
  const m = new MultiMap<string, string>();
  m.add('k', 'a');
  m.add('k', 'b');
  m.delete('k', 'a');
  assert.equal([m.has('k'), m.get('k')], [true, ['b']]);
  m.delete('k', 'b');
  assert.equal([m.has('k'), m.get('k')], [false, []]);
});

test('deleteAll takes a key with all its values', () => {
  const m = new MultiMap<string, string>();
  m.add('k', 'a');
  m.add('k', 'b');
  m.deleteAll('k');
  assert.equal([m.has('k'), m.get('k')], [false, []]);
});

test('deleting a value a key does not hold changes nothing', () => {
  const m = new MultiMap<string, string>();
  m.add('k', 'a');
  m.delete('k', 'x');
  m.delete('other', 'a');
  assert.equal([m.get('k'), m.has('other')], [['a'], false]);
});

test('what get returns is a copy: changing it changes nothing held', () => {
  const m = new MultiMap<string, string>();
  m.add('k', 'a');
  m.get('k').push('b');
  assert.equal(m.get('k'), ['a']);
});

test.run();
