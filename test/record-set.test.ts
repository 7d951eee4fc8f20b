import { matchFor } from '../lib/resolve/specificity.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError } from '../lib/errors.js';
import { DEFAULTS, type ClusterSpec, type Endpoint, type NameRecord, type Resolution } from '../lib/model.js';
import { buildRecordSet, lbRecordName, whyNotServed } from '../lib/resolve/record-set.js';

const D = 'c1.example.com';
const ip = (value: string): Endpoint => ({ kind: 'ip', ip: value });
const host = (hostname: string): Endpoint => ({ kind: 'hostname', hostname });

function spec(over: Partial<ClusterSpec> = {}): ClusterSpec {
  return {
    domain: D,
    role: 'control-plane',
    lbs: { api: [ip('10.0.0.10')], 'api-int': [ip('10.0.0.20')], ingress: [ip('10.0.1.30')] },
    extraRecords: [],
    nodes: [],
    upstreams: ['10.0.0.2'],
    ttl: 60,
    reload: { intervalSeconds: 2, jitterSeconds: 1 },
    ...over,
  };
}

function resolutions(...rs: Resolution[]): Map<string, Resolution> {
  return new Map(rs.map((r) => [r.hostname, r]));
}

function record(name: string, s: ClusterSpec = spec(), res: ReadonlyMap<string, Resolution> = new Map()): NameRecord {
  const found = buildRecordSet(s, res).recordSet.names.find((n) => n.name === name);
  if (!found) throw new Error(`no record ${name}`);
  return found;
}

/** CoreDNS matches the lower-cased query name with its trailing dot. */
const matches = (r: NameRecord, qname: string): boolean => new RegExp(matchFor(r.name).match).test(qname);

test("an external API LB named with data all refused is held, not served through the internal LB as a private cluster's", () => {
  const before = buildRecordSet(spec(), new Map()).recordSet;
  const { recordSet, held } = buildRecordSet(spec({ lbs: { api: [], 'api-int': [ip('10.0.0.20')], ingress: [ip('10.0.1.30')] }, refusedLbs: { api: 'every entry was refused' } }), new Map(), { previous: before });
  assert.equal(recordSet.names.find((n) => n.name === `api.${D}`)?.v4, ['10.0.0.10']);
  assert.ok(held.some((h) => h.name === `api.${D}`));
});

test('the ingress LB serves the wildcard *.apps under the domain, scoped to the apps zone', () => {
  assert.is(lbRecordName('ingress', D), `*.apps.${D}`);
  const r = record(`*.apps.${D}`);
  assert.is(matchFor(r.name).zone, `apps.${D}`);
  assert.is(r.source, 'ingress');
});

test('the wildcard matches one label under apps', () => {
  assert.ok(matches(record(`*.apps.${D}`), `a.apps.${D}.`));
});

test('the wildcard matches several labels under apps, as a DNS wildcard does', () => {
  assert.ok(matches(record(`*.apps.${D}`), `a.b.apps.${D}.`));
});

test('the wildcard does not match apps itself', () => {
  assert.not.ok(matches(record(`*.apps.${D}`), `apps.${D}.`));
});

test('the wildcard does not match a name that merely ends in "apps"', () => {
  assert.not.ok(matches(record(`*.apps.${D}`), `xapps.${D}.`));
});

test('the wildcard does not match a name under a longer domain', () => {
  assert.not.ok(matches(record(`*.apps.${D}`), `a.apps.${D}.evil.example.`));
});

test('an exact name matches only itself: its dots are literal', () => {
  const r = record(`api.${D}`);
  assert.is(matchFor(r.name).zone, `api.${D}`);
  assert.ok(matches(r, `api.${D}.`));
  assert.not.ok(matches(r, `a.api.${D}.`));
  assert.not.ok(matches(r, `xapi.${D}.`));
  assert.not.ok(matches(r, `apiXc1.example.com.`));
});

test('exact names come before wildcards, and a deeper wildcard before a shallower one', () => {
  const s = spec({
    extraRecords: [
      { name: `*.apps.${D}`, targets: [ip('10.0.1.31')], source: 'dnsrecord/openshift-ingress-operator/default-wildcard' },
      { name: `*.shard.apps.${D}`, targets: [ip('10.0.2.30')], source: 'dnsrecord/openshift-ingress-operator/shard' },
      { name: `console.apps.${D}`, targets: [ip('10.0.3.30')], source: 'gateway/openshift-ingress/console' },
    ],
  });
  const names = buildRecordSet(s, new Map()).recordSet.names.map((n) => n.name);
  assert.equal(names, [`console.apps.${D}`, `api-int.${D}`, `api.${D}`, `*.shard.apps.${D}`, `*.apps.${D}`]);
});

test('an extra record named like the ingress wildcard does not change the *.apps addresses', () => {
  const s = spec({ extraRecords: [{ name: `*.apps.${D}`, targets: [ip('10.0.1.31')], source: 'dnsrecord/x/y' }] });
  const r = record(`*.apps.${D}`, s);
  assert.equal(r.v4, ['10.0.1.30']);
  assert.is(r.source, 'ingress');
});

test('an extra record named like an LB does not serve that name while the LB has no address', () => {
  const s = spec({ lbs: { ...spec().lbs, ingress: [] }, extraRecords: [{ name: `*.apps.${D}`, targets: [ip('10.0.1.31')], source: 'dnsrecord/x/y' }] });
  const { recordSet, empty } = buildRecordSet(s, new Map());
  assert.not.ok(recordSet.names.some((n) => n.name === `*.apps.${D}`));
  assert.ok(empty.includes(`*.apps.${D}`));
});

test("a hostname's A and AAAA addresses merge with the IP literals of the same LB", () => {
  const s = spec({ lbs: { ...spec().lbs, api: [ip('10.0.0.12'), host('lb.example.net'), ip('fd00::12')] } });
  const r = record(`api.${D}`, s, resolutions({ hostname: 'lb.example.net', v4: ['10.0.0.9', '10.0.0.11'], v6: ['fd00::9'], ttlSeconds: 30 }));
  assert.equal(r.v4, ['10.0.0.9', '10.0.0.11', '10.0.0.12']);
  assert.equal(r.v6, ['fd00::9', 'fd00::12']);
});

test('an address given both literally and by a hostname is served once', () => {
  const s = spec({ lbs: { ...spec().lbs, api: [ip('10.0.0.10'), host('a.example.net'), host('b.example.net')] } });
  const r = record(
    `api.${D}`,
    s,
    resolutions(
      { hostname: 'a.example.net', v4: ['10.0.0.10', '10.0.0.11'], v6: [], ttlSeconds: 60 },
      { hostname: 'b.example.net', v4: ['10.0.0.11'], v6: ['fd00::1'], ttlSeconds: 60 },
    ),
  );
  assert.equal(r.v4, ['10.0.0.10', '10.0.0.11']);
  assert.equal(r.v6, ['fd00::1']);
});

test('addresses are sorted numerically, not as text', () => {
  const s = spec({ lbs: { ...spec().lbs, api: [ip('10.0.0.100'), ip('10.0.0.9'), ip('fd00::a'), ip('fd00::10'), ip('9.0.0.1')] } });
  const r = record(`api.${D}`, s);
  assert.equal(r.v4, ['9.0.0.1', '10.0.0.9', '10.0.0.100']);
  assert.equal(r.v6, ['fd00::a', 'fd00::10']);
});

test('a name whose hostname has not resolved is listed as empty and not served', () => {
  const s = spec({ lbs: { ...spec().lbs, ingress: [host('router.example.net')] } });
  const { recordSet, empty } = buildRecordSet(s, new Map());
  assert.equal(empty, [`*.apps.${D}`]);
  assert.equal(recordSet.names.map((n) => n.name), [`api-int.${D}`, `api.${D}`]);
});

test('an LB with no endpoints is listed as empty and not served', () => {
  const s = spec({ lbs: { api: [ip('10.0.0.10')], 'api-int': [ip('10.0.0.20')], ingress: [] } });
  const { recordSet, empty } = buildRecordSet(s, new Map());
  assert.equal(empty, [`*.apps.${D}`]);
  assert.equal(recordSet.names.map((n) => n.name), [`api-int.${D}`, `api.${D}`]);
});

test('16 addresses after resolution and de-duplication are accepted', () => {
  const literals = Array.from({ length: 10 }, (_, i) => ip(`10.0.0.${i + 1}`));
  const s = spec({ lbs: { ...spec().lbs, api: [...literals, host('lb.example.net')] } });
  const v4 = Array.from({ length: 7 }, (_, i) => `10.0.0.${i + 10}`);
  const r = record(`api.${D}`, s, resolutions({ hostname: 'lb.example.net', v4, v6: [], ttlSeconds: 60 }));
  assert.is(r.v4.length, 16);
});

test('more than 16 addresses after resolution are refused, naming the record and the LB host name they came from', () => {
  const literals = Array.from({ length: 10 }, (_, i) => ip(`10.0.0.${i + 1}`));
  const s = spec({ lbs: { ...spec().lbs, api: [...literals, host('lb.example.net')] } });
  const v6 = Array.from({ length: 7 }, (_, i) => `fd00::${i + 1}`);
  try {
    buildRecordSet(s, resolutions({ hostname: 'lb.example.net', v4: [], v6, ttlSeconds: 60 }));
    assert.unreachable('17 addresses must be refused');
  } catch (err) {
    assert.instance(err, ValidationError);
    assert.is((err as ValidationError).field, `api.${D}`);
    assert.match((err as Error).message, /has 17 addresses \(from lb\.example\.net\), more than the limit of 16/);
  }
});

test("a DNSRecord's name over 16 addresses is left out, not failing the set: API data never fails a render", () => {
  const s = spec({ extraRecords: [{ name: `x.apps.${D}`, targets: [host('lb.example.net')], source: 'dnsrecord/ns/x' }] });
  const v4 = Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 100}`);
  const { recordSet, empty, held } = buildRecordSet(s, resolutions({ hostname: 'lb.example.net', v4, v6: [], ttlSeconds: 60 }));
  assert.not.ok(recordSet.names.some((n) => n.name === `x.apps.${D}`));
  assert.ok(empty.includes(`x.apps.${D}`));
  assert.ok(held.some((h) => h.name === `x.apps.${D}` && h.dropped === true));
});

test('with the record set served before, a name whose new hostname has not resolved keeps its previous addresses', () => {
  const previous = buildRecordSet(spec(), new Map()).recordSet;
  const s = spec({ lbs: { ...spec().lbs, ingress: [host('router-b.example.net')] } });
  const { recordSet, empty, held } = buildRecordSet(s, new Map(), { previous });
  assert.equal(recordSet.names.find((n) => n.name === `*.apps.${D}`)?.v4, ['10.0.1.30']);
  assert.equal(empty, []);
  assert.equal(held, [{ name: `*.apps.${D}`, reason: 'has no resolved address yet' }]);
});

test('with the record set served before, a name over 16 addresses keeps its previous addresses instead of failing the whole set', () => {
  const previous = buildRecordSet(spec(), new Map()).recordSet;
  const s = spec({ lbs: { ...spec().lbs, api: [host('lb.example.net')] } });
  const v4 = Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 100}`);
  const { recordSet, held } = buildRecordSet(s, resolutions({ hostname: 'lb.example.net', v4, v6: [], ttlSeconds: 60 }), { previous });
  assert.equal(recordSet.names.find((n) => n.name === `api.${D}`)?.v4, ['10.0.0.10']);
  assert.equal(held, [{ name: `api.${D}`, reason: 'has 17 addresses (from lb.example.net), more than the limit of 16' }]);
});

test('with the record set served before, a name over 16 addresses that was not served before is left out, not failed', () => {
  const previous = buildRecordSet(spec({ lbs: { ...spec().lbs, api: [], 'api-int': [] } }), new Map()).recordSet;
  const s = spec({ lbs: { ...spec().lbs, api: [host('lb.example.net')] } });
  const v4 = Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 100}`);
  const { recordSet, empty, held } = buildRecordSet(s, resolutions({ hostname: 'lb.example.net', v4, v6: [], ttlSeconds: 60 }), { previous });
  assert.not.ok(recordSet.names.some((n) => n.name === `api.${D}`));
  assert.equal(empty, [`api.${D}`]);
  assert.equal(held, [{ name: `api.${D}`, reason: 'has 17 addresses (from lb.example.net), more than the limit of 16', dropped: true }]);
});

test('with the record set served before, an LB the cluster no longer lists any endpoint for is dropped, not held', () => {
  const previous = buildRecordSet(spec(), new Map()).recordSet;
  const { recordSet, empty, held } = buildRecordSet(spec({ lbs: { ...spec().lbs, ingress: [] } }), new Map(), { previous });
  assert.not.ok(recordSet.names.some((n) => n.name === `*.apps.${D}`));
  assert.equal(empty, [`*.apps.${D}`]);
  assert.equal(held, []);
});

test('without the record set served before (one-shot commands), over 16 addresses is still refused', () => {
  const s = spec({ lbs: { ...spec().lbs, api: [host('lb.example.net')] } });
  const v4 = Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 100}`);
  assert.throws(() => buildRecordSet(s, resolutions({ hostname: 'lb.example.net', v4, v6: [], ttlSeconds: 60 }), {}), (err: unknown) => err instanceof ValidationError);
});

test('a node is served under its short name and under the cluster domain', () => {
  const { nodes } = buildRecordSet(spec({ nodes: [{ name: 'master-0', ips: ['10.0.0.5', 'fd00::5'] }] }), new Map()).recordSet;
  assert.equal(nodes, [{ name: 'master-0', fqdn: `master-0.${D}`, v4: ['10.0.0.5'], v6: ['fd00::5'] }]);
});

test('a node whose name already ends in the domain is not given the domain twice', () => {
  const { nodes } = buildRecordSet(spec({ nodes: [{ name: `master-2.${D}`, ips: ['10.0.0.7'] }] }), new Map()).recordSet;
  assert.is(nodes[0]?.fqdn, `master-2.${D}`);
});

test('a bootstrap node serves api-int and *.apps: no api, no extra records, no nodes', () => {
  const s = spec({
    role: 'bootstrap',
    nodes: [{ name: 'master-0', ips: ['10.0.0.5'] }],
    extraRecords: [{ name: `console.apps.${D}`, targets: [ip('10.0.3.30')], source: 'gateway/x/y' }],
  });
  const { recordSet, empty } = buildRecordSet(s, new Map());
  assert.equal(recordSet.names.map((n) => n.name), [`api-int.${D}`, `*.apps.${D}`]);
  assert.equal(recordSet.nodes, []);
  assert.equal(empty, []);
});

test('a bootstrap node before the ingress LB exists serves api-int, *.apps goes upstream', () => {
  const s = spec({ role: 'bootstrap', lbs: { api: [], 'api-int': [ip('10.0.0.20')], ingress: [] } });
  const { recordSet, empty } = buildRecordSet(s, new Map());
  assert.equal(recordSet.names.map((n) => n.name), [`api-int.${D}`]);
  assert.equal(empty, [`*.apps.${D}`]);
});

test('an apps-only node serves *.apps alone: no api, api-int, extra records or nodes', () => {
  const s = spec({
    role: 'apps-only',
    nodes: [{ name: 'master-0', ips: ['10.0.0.5'] }],
    extraRecords: [{ name: `console.other.${D}`, targets: [ip('10.0.3.30')], source: 'gateway/x/y' }],
  });
  const { recordSet } = buildRecordSet(s, new Map());
  assert.equal(recordSet.names.map((n) => n.name), [`*.apps.${D}`]);
  assert.equal(recordSet.nodes, []);
});

test('a worker serves what a control plane serves', () => {
  const s = { nodes: [{ name: 'master-0', ips: ['10.0.0.5'] }], extraRecords: [{ name: `console.other.${D}`, targets: [ip('10.0.3.30')], source: 'dnsrecord/x/y' }] };
  const worker = buildRecordSet(spec({ ...s, role: 'worker' }), new Map()).recordSet;
  const controlPlane = buildRecordSet(spec({ ...s, role: 'control-plane' }), new Map()).recordSet;
  assert.equal({ ...worker, role: 'control-plane' }, controlPlane);
});

test('a private cluster: api, with no external LB, is served by the internal API LB, and said so', () => {
  const s = spec({ lbs: { api: [], 'api-int': [ip('10.0.0.20')], ingress: [ip('10.0.1.30')] } });
  const built = buildRecordSet(s, new Map());
  assert.equal(built.recordSet.names.map((n) => [n.name, n.v4, n.source]), [[`api-int.${D}`, ['10.0.0.20'], 'api-int'], [`api.${D}`, ['10.0.0.20'], 'api-int'], [`*.apps.${D}`, ['10.0.1.30'], 'ingress']]);
  assert.equal(built.notes, [{ name: `api.${D}`, note: 'served by the internal API load balancer: a private cluster has no external one' }]);
  assert.equal(whyNotServed(s, built), []);
});

test("a private cluster whose internal API LB has not resolved yet: api is not served, and said to wait for the internal LB", () => {
  const s = spec({ lbs: { api: [], 'api-int': [host('internal.example.net')], ingress: [ip('10.0.1.30')] } });
  const built = buildRecordSet(s, new Map());
  assert.equal(whyNotServed(s, built).find((n) => n.name === `api.${D}`), { name: `api.${D}`, reason: 'its internal API load balancer (a private cluster has no external one) has no resolved address yet' });
});

test('the record set carries the settings the template needs', () => {
  const { recordSet } = buildRecordSet(spec({ ttl: 30, reload: { intervalSeconds: 10, jitterSeconds: 5 }, upstreams: ['10.0.0.2', 'fd00::53'] }), new Map());
  assert.is(recordSet.domain, D);
  assert.is(recordSet.role, 'control-plane');
  assert.is(recordSet.ttl, 30);
  assert.equal(recordSet.reload, { intervalSeconds: 10, jitterSeconds: 5 });
  assert.equal(recordSet.upstreams, ['10.0.0.2', 'fd00::53']);
  assert.is(recordSet.healthPort, DEFAULTS.healthPort);
  assert.is(recordSet.readyPort, DEFAULTS.readyPort);
  assert.is(recordSet.cacheSeconds, DEFAULTS.cacheSeconds);
});

test('the same spec and resolutions always give the same record set', () => {
  const s = spec({ lbs: { ...spec().lbs, api: [host('b.example.net'), host('a.example.net')] } });
  const res = resolutions(
    { hostname: 'a.example.net', v4: ['10.0.0.2'], v6: [], ttlSeconds: 60 },
    { hostname: 'b.example.net', v4: ['10.0.0.1'], v6: [], ttlSeconds: 60 },
  );
  assert.equal(buildRecordSet(s, res), buildRecordSet(s, new Map([...res].reverse())));
});

test.run();
