import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeObject, endpointFromApi, ipsFromApi } from '../lib/sources/untrusted.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

const WHERE = 'service openshift-ingress/router-default status.loadBalancer.ingress[2].ip';

test('an IP literal becomes an ip endpoint in canonical form', () => {
  const { warn, warnings } = collector();
  assert.equal(endpointFromApi('FD00:0:0::0001', WHERE, warn), { kind: 'ip', ip: 'fd00::1' });
  assert.equal(warnings, []);
});

test('a DNS name becomes a hostname endpoint, lower case without the trailing dot', () => {
  const { warn, warnings } = collector();
  assert.equal(endpointFromApi('ELB-1.us-east-1.elb.amazonaws.com.', WHERE, warn), { kind: 'hostname', hostname: 'elb-1.us-east-1.elb.amazonaws.com' });
  assert.equal(warnings, []);
});

for (const bad of ['010.0.0.1', '10.0.0.256', 'fe80::1%eth0']) {
  test(`a malformed IP (${bad}) is refused with a warning naming the object and field`, () => {
    const { warn, warnings } = collector();
    assert.is(endpointFromApi(bad, WHERE, warn), undefined);
    assert.is(warnings.length, 1);
    assert.ok(warnings[0]?.msg.startsWith(WHERE), warnings[0]?.msg);
    assert.is(warnings[0]?.fields.where, WHERE);
    assert.is(warnings[0]?.fields.value, bad);
  });
}

for (const bad of ['a{b.example.com', 'x"y.example.com', 'a b.example.com', '{{ .Name }}', 'a.example.com\nb.example.com', 'a.example.com # x']) {
  test(`a name carrying Corefile syntax (${JSON.stringify(bad)}) is refused with a warning`, () => {
    const { warn, warnings } = collector();
    assert.is(endpointFromApi(bad, WHERE, warn), undefined);
    assert.is(warnings.length, 1);
    assert.ok(warnings[0]?.msg.startsWith(WHERE), warnings[0]?.msg);
  });
}

test('a single-label host name is refused: it would be looked up through search domains', () => {
  const { warn, messages } = collector();
  assert.is(endpointFromApi('router', WHERE, warn), undefined);
  assert.match(messages()[0] ?? '', /single-label/);
});

test('a value that is not a string is refused with a warning', () => {
  const { warn, messages } = collector();
  assert.is(endpointFromApi(42, WHERE, warn), undefined);
  assert.match(messages()[0] ?? '', /not a string/);
});

test('an IP list keeps valid addresses in order, canonical', () => {
  const { warn, warnings } = collector();
  assert.equal(ipsFromApi(['10.0.0.2', '10.0.0.1', 'FD00::A'], 'infrastructure cluster list', warn), ['10.0.0.2', '10.0.0.1', 'fd00::a']);
  assert.equal(warnings, []);
});

test('empty and non-string IP list entries are skipped, each with a warning naming its index', () => {
  const { warn, messages } = collector();
  assert.equal(ipsFromApi(['', '10.0.0.1', null, 7], 'infrastructure cluster list', warn), ['10.0.0.1']);
  const msgs = messages();
  assert.is(msgs.length, 3);
  assert.ok(msgs[0]?.startsWith('infrastructure cluster list[0]'), msgs[0]);
  assert.ok(msgs[1]?.startsWith('infrastructure cluster list[2]'), msgs[1]);
  assert.ok(msgs[2]?.startsWith('infrastructure cluster list[3]'), msgs[2]);
});

test('a repeated IP, however it is written, is kept once with a warning', () => {
  const { warn, messages } = collector();
  assert.equal(ipsFromApi(['fd00::1', '10.0.0.1', 'fd00:0::1'], 'infrastructure cluster list', warn), ['fd00::1', '10.0.0.1']);
  assert.is(messages().length, 1);
  assert.match(messages()[0] ?? '', /^infrastructure cluster list\[2\].*repeats/);
});

test('malformed IPs in a list are skipped and the rest kept', () => {
  const { warn, messages } = collector();
  assert.equal(ipsFromApi(['010.0.0.1', '10.0.0.256', 'fe80::1%eth0', '10.0.0.9'], 'l', warn), ['10.0.0.9']);
  assert.is(messages().length, 3);
});

test('more than 16 IPs are capped at the first 16 with one warning listing the rest', () => {
  const { warn, warnings } = collector();
  const ips = Array.from({ length: 18 }, (_, i) => `10.0.0.${i + 1}`);
  assert.equal(ipsFromApi(ips, 'infrastructure cluster list', warn), ips.slice(0, 16));
  assert.is(warnings.length, 1);
  assert.match(warnings[0]?.msg ?? '', /^infrastructure cluster list: 18 distinct entries exceed the limit of 16/);
  assert.equal(warnings[0]?.fields.dropped, ['10.0.0.17', '10.0.0.18']);
});

test('an absent list is empty without a warning', () => {
  const { warn, warnings } = collector();
  assert.equal(ipsFromApi(undefined, 'l', warn), []);
  assert.equal(warnings, []);
});

test('a list field holding something else is empty with a warning', () => {
  const { warn, messages } = collector();
  assert.equal(ipsFromApi('10.0.0.1', 'l', warn), []);
  assert.match(messages()[0] ?? '', /^l: "10.0.0.1" is not a list/);
});

test('objects are named by kind and namespace/name', () => {
  assert.is(describeObject('service', { namespace: 'openshift-ingress', name: 'router-default' }), 'service openshift-ingress/router-default');
  assert.is(describeObject('node', { name: 'master-0' }), 'node master-0');
});



test('thousands of addresses past the limit give one short warning, naming the first 16 dropped and counting the rest', () => {
  const { warn, warnings } = collector();
  const ips = Array.from({ length: 3000 }, (_, i) => `10.${Math.floor(i / 250)}.${i % 250}.1`);
  assert.is(ipsFromApi(ips, WHERE, warn).length, 16);
  assert.is(warnings.length, 1);
  assert.ok((warnings[0]?.msg.length ?? 0) < 600, `${warnings[0]?.msg.length} characters`);
  assert.match(warnings[0]?.msg ?? '', / and 2968 more$/);
  assert.is((warnings[0]?.fields.dropped as unknown[]).length, 16);
});
test.run();
