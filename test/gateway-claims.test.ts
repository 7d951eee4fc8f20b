/**
 * What an object may claim in a Gateway zone, before any record is made of it. Built in
 * process; gateway-dns.test.ts has the refusals as an admin sees them (log, metric, Event).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { DEFAULTS, type GatewayEndpoint } from '../lib/model.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { ZONE } from './support/gateway-fixture.js';

const base = specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']);
const INNER = `team.${ZONE}`;

function build(zones: readonly string[], zone: string, endpoints: readonly GatewayEndpoint[]) {
  const owners = [{ source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-01-01T00:00:00Z', zone, endpoints }];
  const { recordSet, gateway } = buildRecordSet({ ...base, gateway: { zones, geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map([['lb.example.org', { v4: ['198.51.100.9'], v6: [] } as never]]));
  return { served: recordSet.names.map((n) => n.name), refused: (gateway?.refused ?? []).map((r) => `${r.name} ${r.reason}`) };
}
const a = (dnsName: string): GatewayEndpoint => ({ dnsName, recordType: 'A', targets: ['192.0.2.5'], ttl: 60, setIdentifier: '' });
const cname = (dnsName: string): GatewayEndpoint => ({ dnsName, recordType: 'CNAME', targets: ['lb.example.org'], ttl: 60, setIdentifier: '' });

test("a CNAME at a zone's apex is refused (zone-apex): the apex holds the zone's SOA and NS", () => {
  const { served, refused } = build([ZONE], ZONE, [cname(ZONE), cname(`www.${ZONE}`)]);
  assert.equal(refused, [`${ZONE} zone-apex`]);
  assert.ok(served.includes(`www.${ZONE}`));
  assert.not.ok(served.includes(ZONE));
});

test('one object with two records of one name and type, neither in a set, serves the first and refuses the second (duplicate), rather than drop it unsaid', () => {
  const { served, refused } = build([ZONE], ZONE, [a(`www.${ZONE}`), { ...a(`www.${ZONE}`), targets: ['192.0.2.6'] }]);
  assert.equal(refused, [`www.${ZONE} duplicate`]);
  assert.ok(served.includes(`www.${ZONE}`));
});

test('one object repeating a record exactly serves it once and refuses nothing', () => {
  const { served, refused } = build([ZONE], ZONE, [a(`www.${ZONE}`), a(`www.${ZONE}`)]);
  assert.equal(refused, []);
  assert.equal(served.filter((n) => n === `www.${ZONE}`), [`www.${ZONE}`]);
});

test("addresses at a zone's apex are served beside its SOA and NS", () => {
  const { served, refused } = build([ZONE], ZONE, [a(ZONE)]);
  assert.equal(refused, []);
  assert.ok(served.includes(ZONE));
});

test('a name in a zone nested in its object\'s zone is refused (outside-zones): its file is the inner zone\'s, which Kuadrant would not answer it from', () => {
  const { served, refused } = build([ZONE, INNER], ZONE, [a(`x.${INNER}`), a(`y.${ZONE}`)]);
  assert.equal(refused, [`x.${INNER} outside-zones`]);
  assert.ok(served.includes(`y.${ZONE}`));
});

test('a name of the inner zone is served for an object of that zone', () => {
  const { served, refused } = build([ZONE, INNER], INNER, [a(`x.${INNER}`)]);
  assert.equal(refused, []);
  assert.ok(served.includes(`x.${INNER}`));
});

test.run();
