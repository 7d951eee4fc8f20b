import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import type { ClusterSpec } from '../lib/model.js';
import { nameGuard } from '../lib/resolve/name-guard.js';

const D = 'c1.example.com';

const spec = (over: Partial<ClusterSpec> = {}): ClusterSpec => ({ ...specFromConfig({ ...EXAMPLE_CONFIG, domain: D }, ['10.0.0.2']), nodes: [], extraRecords: [], ...over });

const nodes = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `worker-${i}`, ips: [`10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`] }));

test('a name under one of 5,000 nodes is refused, naming that node', () => {
  const guard = nameGuard(spec({ nodes: nodes(5000) }));
  assert.equal(guard.meeting(`x.worker-4321.${D}`), { reason: 'cluster-name', detail: `is or covers the cluster's own name worker-4321.${D}` });
  assert.is(guard.meeting(`x.worker-5000.${D}`), undefined);
});

test('a node with a dotted name is served by that name as well: a Gateway name equal to or under it is refused', () => {
  const guard = nameGuard(spec({ nodes: [{ name: 'w0.corp.example.net', ips: ['10.0.0.9'] }] }));
  assert.equal(guard.meeting('w0.corp.example.net'), { reason: 'cluster-name', detail: "is or covers the cluster's own name w0.corp.example.net" });
  assert.equal(guard.meeting('*.corp.example.net')?.reason, 'cluster-name');
  assert.is(guard.meeting('w1.corp.example.net'), undefined);
});

test("a wildcard over the cluster's names is refused, naming the first of them: api", () => {
  const guard = nameGuard(spec({ nodes: nodes(3) }));
  assert.equal(guard.meeting(`*.${D}`), { reason: 'cluster-name', detail: `is or covers the cluster's own name api.${D}` });
  assert.equal(guard.meeting(`*.apps.${D}`), { reason: 'cluster-name', detail: `is or covers the cluster's own name apps.${D}` });
});

test('labels are compared whole: a name ending in the same letters is not under a cluster name', () => {
  const guard = nameGuard(spec());
  assert.is(guard.meeting(`xapi.${D}`), undefined);
  assert.is(guard.meeting(`api-internal.${D}`), undefined);
});

test("a name under another source's wildcard, and that wildcard's apex, meet it", () => {
  const guard = nameGuard(spec({ extraRecords: [{ name: `*.shop.${D}`, targets: [], source: 'dnsrecord/ns/shop' }] }));
  const meets = { reason: 'other-source', detail: `meets *.shop.${D}, which dnsrecord/ns/shop serves` };
  assert.equal(guard.meeting(`a.b.shop.${D}`), meets);
  assert.equal(guard.meeting(`shop.${D}`), meets);
  assert.equal(guard.meeting(`*.${D}`), { reason: 'cluster-name', detail: `is or covers the cluster's own name api.${D}` });
  assert.is(guard.meeting(`shop2.${D}`), undefined);
});

test("a name under another source's name that is not a wildcard is a name of its own: only that name, and a wildcard over it, meet it", () => {
  const guard = nameGuard(spec({ extraRecords: [{ name: `gw.${D}`, targets: [], source: 'dnsrecord/ns/gw' }] }));
  const meets = { reason: 'other-source', detail: `meets gw.${D}, which dnsrecord/ns/gw serves` };
  assert.equal(guard.meeting(`gw.${D}`), meets);
  assert.is(guard.meeting(`www.gw.${D}`), undefined);
  assert.is(guard.meeting(`*.gw.${D}`), undefined);
});

test("a wildcard over another source's name meets it", () => {
  const guard = nameGuard(spec({ extraRecords: [{ name: `www.shop.${D}`, targets: [], source: 'dnsrecord/ns/shop' }] }));
  assert.equal(guard.meeting(`*.shop.${D}`), { reason: 'other-source', detail: `meets www.shop.${D}, which dnsrecord/ns/shop serves` });
});

test('the guard is kept while the cluster keeps its names, and made anew when a node joins', () => {
  const first = nameGuard(spec({ nodes: nodes(2) }));
  assert.is(nameGuard(spec({ nodes: nodes(2) })), first);
  const next = nameGuard(spec({ nodes: nodes(3) }));
  assert.is.not(next, first);
  assert.ok(next.meeting(`worker-2.${D}`));
});

test.run();
