/**
 * Where a Gateway name's chain ends. Built in process; the wire is gateway-dns.test.ts's.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { DEFAULTS, type GatewayEndpoint, type RecordSet, type Resolution } from '../lib/model.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { ZONE } from './support/gateway-fixture.js';

const APP = `app.${ZONE}`;
const base = specFromConfig({ ...EXAMPLE_CONFIG, domain: `c1.${ZONE}` }, ['127.0.0.1']);
const cname = (dnsName: string, target: string): GatewayEndpoint => ({ dnsName, recordType: 'CNAME', targets: [target], ttl: 60, setIdentifier: '' });

function build(target: string, resolved: Record<string, string[]>, opts: { more?: readonly GatewayEndpoint[]; previous?: RecordSet } = {}) {
  const owners = [{ source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-01-01T00:00:00Z', zone: ZONE, endpoints: [cname(APP, target), ...(opts.more ?? [])] }];
  const resolutions = new Map(Object.entries(resolved).map(([name, v4]): [string, Resolution] => [name, { v4, v6: [] } as unknown as Resolution]));
  return buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, resolutions, { previous: opts.previous });
}

test('a CNAME to a name of the zone that nothing serves is not served, though the upstream knows that name: CoreDNS answers it NXDOMAIN from the zone', () => {
  const { recordSet, empty } = build(`other.${ZONE}`, { [`other.${ZONE}`]: ['198.51.100.9'] });
  assert.is(recordSet.names.find((n) => n.name === APP), undefined);
  assert.ok(empty.includes(APP));
});

test('a CNAME to a name only a wildcard of the zone answers is not followed: not served, while the wildcard is', () => {
  const owners = [{ source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-01-01T00:00:00Z', zone: ZONE, endpoints: [cname(APP, `x.wild.${ZONE}`), { dnsName: `*.wild.${ZONE}`, recordType: 'A' as const, targets: ['192.0.2.5'], ttl: 60, setIdentifier: '' }] }];
  const { recordSet, empty } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map());
  assert.is(recordSet.names.find((n) => n.name === APP), undefined);
  assert.ok(empty.includes(APP));
  assert.equal(recordSet.names.find((n) => n.name === `*.wild.${ZONE}`)?.v4, ['192.0.2.5']);
});

test('a name whose target stops resolving keeps its previous records: an address not resolved yet passes', () => {
  const before = build('lb.example.org', { 'lb.example.org': ['198.51.100.9'] }).recordSet;
  const { recordSet, held } = build('lb.example.org', {}, { previous: before });
  assert.equal(recordSet.names.find((n) => n.name === APP)?.v4, ['198.51.100.9']);
  assert.ok(held.some((h) => h.name === APP));
});

test("a name another owner takes, whose target does not resolve yet, is not held with the previous owner's addresses", () => {
  const before = build('lb.example.org', { 'lb.example.org': ['198.51.100.9'] }).recordSet;
  const owners = [{ source: 'dnsrecord.kuadrant.io/other/r', namespace: 'other', created: '2026-02-01T00:00:00Z', zone: ZONE, endpoints: [cname(APP, 'lb2.example.org')] }];
  const { recordSet, held, empty } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map(), { previous: before });
  assert.is(recordSet.names.find((n) => n.name === APP), undefined);
  assert.not.ok(held.some((h) => h.name === APP));
  assert.ok(empty.includes(APP));
});

test('a name whose chain turns into a loop is not held with its previous records: the records themselves are wrong, which waiting does not mend', () => {
  const before = build('lb.example.org', { 'lb.example.org': ['198.51.100.9'] }).recordSet;
  const loop = `loop.${ZONE}`;
  const { recordSet, held } = build(loop, {}, { previous: before, more: [cname(loop, APP)] });
  assert.is(recordSet.names.find((n) => n.name === APP), undefined);
  assert.not.ok(held.some((h) => h.name === APP));
});

test('a chain of thousands of CNAMEs is not followed to its end: the record set is built, and each name on it is served as its own chain allows (8 links at most)', () => {
  const n = 5000;
  const link = (i: number) => `c${i}.${ZONE}`;
  const chain = Array.from({ length: n }, (_, i) => cname(link(i), i === n - 1 ? 'lb.example.org' : link(i + 1)));
  const { recordSet, empty } = build(link(0), { 'lb.example.org': ['198.51.100.9'] }, { more: chain });
  assert.ok(empty.includes(APP));
  assert.ok(empty.includes(link(n - 9)), 'nine links to the address');
  assert.equal(recordSet.names.find((r) => r.name === link(n - 8))?.v4, ['198.51.100.9'], 'eight links');
});

test('a name whose chain goes on behind a weighted set is served whichever name of it is listed first: the set starts the count again', () => {
  const link = (i: number) => `c${i}.${ZONE}`;
  const set = `set.${ZONE}`;
  const weighted = (target: string): GatewayEndpoint => ({ ...cname(set, target), setIdentifier: target, weight: 10 });
  const chain = Array.from({ length: 8 }, (_, i) => cname(link(i), i === 7 ? 'lb.example.org' : link(i + 1)));
  const endpoints = [cname(APP, set), weighted(link(0)), weighted('lb2.example.org')];
  for (const more of [[...endpoints.slice(1), ...chain], [...chain, ...endpoints.slice(1)]]) {
    const owners = [{ source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-01-01T00:00:00Z', zone: ZONE, endpoints: [endpoints[0] as GatewayEndpoint, ...more] }];
    const resolutions = new Map([['lb.example.org', { v4: ['198.51.100.9'], v6: [] } as unknown as Resolution], ['lb2.example.org', { v4: ['198.51.100.10'], v6: [] } as unknown as Resolution]]);
    const { recordSet } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, resolutions);
    assert.equal([...(recordSet.names.find((n) => n.name === APP)?.v4 ?? [])].sort(), ['198.51.100.10', '198.51.100.9']);
  }
});

test("a CNAME into a name its namespace asked for too and an older namespace was given is not served: a tenant's host never answers another namespace's addresses", () => {
  const klb = `klb.${APP}`;
  const owners = [
    { source: 'dnspolicy/shop/p gateway/shop/g', namespace: 'shop', created: '2026-02-01T00:00:00Z', zone: ZONE, endpoints: [cname(APP, klb), cname(klb, `eu.${klb}`), { dnsName: `eu.${klb}`, recordType: 'A' as const, targets: ['198.51.100.1'], ttl: 60, setIdentifier: '' }] },
    { source: 'dnspolicy/other/p gateway/other/g', namespace: 'other', created: '2025-01-01T00:00:00Z', zone: ZONE, endpoints: [{ dnsName: klb, recordType: 'A' as const, targets: ['203.0.113.66'], ttl: 60, setIdentifier: '' }] },
  ];
  const { recordSet, empty } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map());
  assert.is(recordSet.names.find((n) => n.name === APP), undefined);
  assert.ok(empty.includes(APP));
  assert.equal(recordSet.names.find((n) => n.name === klb)?.v4, ['203.0.113.66']);
});

test("a CNAME into another namespace's name that its own namespace never asked for is followed: pointing at a name is not taking it", () => {
  const target = `shared.${ZONE}`;
  const owners = [
    { source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-02-01T00:00:00Z', zone: ZONE, endpoints: [cname(APP, target)] },
    { source: 'dnsrecord.kuadrant.io/other/r', namespace: 'other', created: '2025-01-01T00:00:00Z', zone: ZONE, endpoints: [{ dnsName: target, recordType: 'A' as const, targets: ['203.0.113.66'], ttl: 60, setIdentifier: '' }] },
  ];
  const { recordSet } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map());
  assert.equal(recordSet.names.find((n) => n.name === APP)?.chain?.map((c) => c.target), [target]);
});

test('a CNAME to a name outside the zones is served with the addresses lbdns resolves for it', () => {
  const { recordSet } = build('lb.example.org', { 'lb.example.org': ['198.51.100.9'] });
  assert.equal(recordSet.names.find((n) => n.name === APP)?.v4, ['198.51.100.9']);
});

test.run();
