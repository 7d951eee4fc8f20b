import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countByKind, sourceKind } from '../lib/resolve/source-kind.js';

const names = (...sources: string[]) => sources.map((source) => ({ source }));

test("a served name's source is reduced to its kind: lb for the cluster's LBs, else what comes before the first slash", () => {
  assert.equal(['api', 'api-int', 'ingress', 'dnsrecord/ns/a', 'dnsrecord.kuadrant.io/ns/b', 'plain'].map(sourceKind), ['lb', 'lb', 'lb', 'dnsrecord', 'dnsrecord.kuadrant.io', 'plain']);
});

test('names are counted per kind, a run of one kind and a kind that starts like the one before alike', () => {
  const counted = countByKind(names('api', 'ingress', 'dnsrecord/ns/a', 'dnsrecord/ns/b', 'dnsrecord.kuadrant.io/ns/c', 'dnsrecord/ns/d', 'dnsrecordx/ns/e', 'api-int', 'plain', 'plain'));
  assert.equal(Object.fromEntries(counted), { lb: 3, dnsrecord: 3, 'dnsrecord.kuadrant.io': 1, dnsrecordx: 1, plain: 2 });
});

test.run();
