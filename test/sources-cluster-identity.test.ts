import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { domainFrom, type DnsConfig } from '../lib/sources/cluster-identity.js';
import type { Infrastructure } from '../lib/sources/infra-lbs.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

const dns = (baseDomain: unknown): DnsConfig => ({ metadata: { name: 'cluster' }, spec: { baseDomain } });
const infra = (apiServerInternalURI: unknown): Infrastructure => ({ metadata: { name: 'cluster' }, status: { apiServerInternalURI } });

test('the cluster DNS config base domain is the cluster domain', () => {
  const { warn, warnings } = collector();
  assert.is(domainFrom(dns('mycluster.example.com'), infra('https://api-int.other.example.com:6443'), warn), 'mycluster.example.com');
  assert.equal(warnings, []);
});

test('the base domain is lower-cased without a trailing dot', () => {
  const { warn } = collector();
  assert.is(domainFrom(dns('MyCluster.Example.com.'), undefined, warn), 'mycluster.example.com');
});

test('without a base domain the domain is the internal API host minus api-int', () => {
  const { warn, warnings } = collector();
  assert.is(domainFrom(undefined, infra('https://api-int.mycluster.example.com:6443'), warn), 'mycluster.example.com');
  assert.is(domainFrom(dns(''), infra('https://API-INT.MyCluster.example.com'), warn), 'mycluster.example.com');
  assert.equal(warnings, []);
});

for (const bad of ['a{b.example.com', 'x"y.example.com', 'a b.example.com', '{{ .Name }}', 'c1.example.com\n}', 'example']) {
  test(`an invalid base domain (${JSON.stringify(bad)}) is refused with a warning and the infra URI used instead`, () => {
    const { warn, messages } = collector();
    assert.is(domainFrom(dns(bad), infra('https://api-int.c1.example.com:6443'), warn), 'c1.example.com');
    assert.is(messages().length, 1);
    assert.ok(messages()[0]?.startsWith('dns cluster spec.baseDomain:'), messages()[0]);
  });
}

test('an invalid base domain with no infrastructure gives no domain', () => {
  const { warn, messages } = collector();
  assert.is(domainFrom(dns('bad domain'), undefined, warn), undefined);
  assert.is(messages().length, 1);
});

test('an internal API host that does not start with api-int gives no domain, with a warning', () => {
  const { warn, messages } = collector();
  assert.is(domainFrom(undefined, infra('https://api.c1.example.com:6443'), warn), undefined);
  assert.ok(messages()[0]?.startsWith('infrastructure cluster status.apiServerInternalURI:'), messages()[0]);
});

test('an internal API URI with an IP host gives no domain, with a warning', () => {
  const { warn, messages } = collector();
  assert.is(domainFrom(undefined, infra('https://[fd00::1]:6443'), warn), undefined);
  assert.is(messages().length, 1);
});

test('an internal API URI that is not a URL gives no domain, with a warning', () => {
  const { warn, messages } = collector();
  assert.is(domainFrom(undefined, infra('api-int.c1.example.com'), warn), undefined);
  assert.match(messages()[0] ?? '', /is not a URL/);
});

test('Corefile syntax in the internal API host is refused with a warning', () => {
  const { warn, messages } = collector();
  assert.is(domainFrom(undefined, infra('https://api-int.c{1.example.com:6443'), warn), undefined);
  assert.ok(messages()[0]?.startsWith('infrastructure cluster status.apiServerInternalURI:'), messages()[0]);
});

test('with neither source there is no domain and no warning', () => {
  const { warn, warnings } = collector();
  assert.is(domainFrom(undefined, undefined, warn), undefined);
  assert.is(domainFrom(dns(undefined), infra(undefined), warn), undefined);
  assert.equal(warnings, []);
});

test.run();
