import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { V1Node, V1NodeAddress } from '@kubernetes/client-node';
import { nodesContribution } from '../lib/sources/nodes.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

function node(name: unknown, addresses: unknown[]): V1Node {
  return { metadata: { name: name as string }, status: { addresses: addresses as V1NodeAddress[] } };
}

const internal = (address: unknown) => ({ type: 'InternalIP', address });
const DOMAIN = 'c1.example.com';

test('a node gives its InternalIPs of both families, canonical', () => {
  const { warn, warnings } = collector();
  const c = nodesContribution([node('master-0', [internal('10.0.0.5'), { type: 'Hostname', address: 'master-0' }, internal('FD00::5')])], warn, DOMAIN);
  assert.equal(c, { nodes: [{ name: 'master-0', ips: ['10.0.0.5', 'fd00::5'] }] });
  assert.equal(warnings, []);
});

test('node names are lower-cased and the nodes sorted by name', () => {
  const { warn } = collector();
  const c = nodesContribution([node('worker-1', [internal('10.0.0.7')]), node('Master-0.C1.example.com', [internal('10.0.0.5')])], warn, DOMAIN);
  assert.equal(c.nodes?.map((n) => n.name), ['master-0.c1.example.com', 'worker-1']);
});

test('a node with only an ExternalIP is skipped with a warning naming it', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('worker-1', [{ type: 'ExternalIP', address: '203.0.113.9' }, { type: 'Hostname', address: 'worker-1' }])], warn, DOMAIN);
  assert.equal(c.nodes, []);
  assert.is(messages().length, 1);
  assert.ok(messages()[0]?.startsWith('node worker-1 status.addresses: has no valid InternalIP address'), messages()[0]);
});

test('a node with no addresses is skipped with a warning', () => {
  const { warn, messages } = collector();
  assert.equal(nodesContribution([{ metadata: { name: 'worker-1' } }], warn, DOMAIN).nodes, []);
  assert.match(messages()[0] ?? '', /^node worker-1 status\.addresses: has no valid InternalIP/);
});

test('a repeated InternalIP is kept once with a warning', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('master-0', [internal('fd00::5'), internal('fd00:0::5')])], warn, DOMAIN);
  assert.equal(c.nodes?.[0]?.ips, ['fd00::5']);
  assert.match(messages()[0] ?? '', /^node master-0 status\.addresses\[1\]\.address: "fd00::5" repeats/);
});

test('malformed and empty InternalIPs are skipped with a warning each, the valid ones kept', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('master-0', [internal('010.0.0.1'), internal('10.0.0.256'), internal('fe80::1%eth0'), internal(''), internal('10.0.0.5')])], warn, DOMAIN);
  assert.equal(c.nodes?.[0]?.ips, ['10.0.0.5']);
  assert.equal(messages().map((m) => m.split(':')[0]), [0, 1, 2, 3].map((i) => `node master-0 status.addresses[${i}].address`));
});

for (const bad of ['a{b', 'x"y', 'a b', '{{ .Name }}', 'master-0\nlog']) {
  test(`a node name carrying Corefile syntax (${JSON.stringify(bad)}) is skipped with a warning naming the field`, () => {
    const { warn, messages } = collector();
    const c = nodesContribution([node(bad, [internal('10.0.0.5')])], warn, DOMAIN);
    assert.equal(c.nodes, []);
    assert.is(messages().length, 1);
    assert.ok(messages()[0]?.startsWith(`node ${bad} metadata.name:`), messages()[0]);
  });
}

test('more than 16 InternalIPs are capped at 16 with a warning', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('master-0', Array.from({ length: 17 }, (_, i) => internal(`10.0.4.${i + 1}`)))], warn, DOMAIN);
  assert.is(c.nodes?.[0]?.ips.length, 16);
  assert.match(messages()[0] ?? '', /^node master-0 status\.addresses: 17 distinct entries exceed the limit of 16/);
});

test('a second node under the same name is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('master-0', [internal('10.0.0.5')]), node('MASTER-0', [internal('10.0.0.6')])], warn, DOMAIN);
  assert.equal(c.nodes, [{ name: 'master-0', ips: ['10.0.0.5'] }]);
  assert.match(messages()[0] ?? '', /^node MASTER-0 metadata\.name: "master-0" names a node already listed/);
});

test('address entries that are not objects are passed over; an InternalIP without an address is warned about', () => {
  const { warn, warnings } = collector();
  const c = nodesContribution([node('master-0', [null, 'InternalIP', { type: 'InternalIP' }, internal('10.0.0.5')])], warn, DOMAIN);
  assert.equal(c.nodes?.[0]?.ips, ['10.0.0.5']);
  assert.is(warnings.length, 1);
});

test('a node whose name as served another node already has is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('m0', [internal('10.0.0.5')]), node('m0.c1.example.com', [internal('10.0.0.6')])], warn, DOMAIN);
  assert.equal(c.nodes, [{ name: 'm0', ips: ['10.0.0.5'] }]);
  assert.match(messages().join('\n'), /"m0\.c1\.example\.com" names a node already listed \(m0\.c1\.example\.com\); node not served twice/);
});

test('of two nodes served under one name, the one whose name sorts first is kept, whatever order they come in', () => {
  const short = node('m0', [internal('10.0.0.5')]);
  const long = node('m0.c1.example.com', [internal('10.0.0.6')]);
  for (const nodes of [[short, long], [long, short]]) assert.equal(nodesContribution(nodes, () => undefined, DOMAIN).nodes, [{ name: 'm0', ips: ['10.0.0.5'] }]);
});

test('a node named like a served name (api, api-int, under apps) is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node('api', [internal('10.0.0.5')]), node('api-int', [internal('10.0.0.6')]), node('x.apps', [internal('10.0.0.7')]), node('worker-0', [internal('10.0.0.8')])], warn, DOMAIN);
  assert.equal((c.nodes ?? []).map((n) => n.name), ['worker-0']);
  const text = messages().join('\n');
  assert.match(text, /"api" is the API name api\.c1\.example\.com/);
  assert.match(text, /"api-int" is the API name api-int\.c1\.example\.com/);
  assert.match(text, /"x\.apps" lies under \*\.apps\.c1\.example\.com/);
});

test('a node named the cluster domain itself is skipped with a warning: its hosts entry would answer the apex', () => {
  const { warn, messages } = collector();
  const c = nodesContribution([node(DOMAIN, [internal('10.0.0.9')]), node('worker-0', [internal('10.0.0.8')])], warn, DOMAIN);
  assert.equal((c.nodes ?? []).map((n) => n.name), ['worker-0']);
  assert.match(messages().join('\n'), /is the cluster domain itself/);
});

test('a node whose name as served exceeds 253 characters is skipped with a warning', () => {
  const { warn, messages } = collector();
  const long = Array.from({ length: 4 }, () => 'n'.repeat(60)).join('.');
  const c = nodesContribution([node(long, [internal('10.0.0.5')])], warn, DOMAIN);
  assert.equal(c.nodes, []);
  assert.match(messages().join('\n'), /longer than DNS's 253 characters; node not served/);
});

test.run();
