/**
 * Weights and geos of hand-written Kuadrant DNSRecords, which Kuadrant's builder never makes:
 * weight 0 drains a target among those the answer picks from, as Kuadrant's plugin never picks
 * one while another weighs more. Built in process; the wire is gateway-dns.test.ts's.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { DEFAULTS, type GatewayEndpoint, type OwnedEndpoints } from '../lib/model.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { ZONE } from './support/gateway-fixture.js';

const APP = `app.${ZONE}`;
const KLB = `klb.${APP}`;
const base = specFromConfig({ ...EXAMPLE_CONFIG, domain: `c1.${ZONE}` }, ['127.0.0.1']);

const ep = (dnsName: string, recordType: GatewayEndpoint['recordType'], target: string, fields: Partial<GatewayEndpoint> = {}): GatewayEndpoint => ({ dnsName, recordType, targets: [target], ttl: 60, setIdentifier: '', ...fields });
const record = (endpoints: readonly GatewayEndpoint[]): OwnedEndpoints => ({ source: 'dnsrecord.kuadrant.io/shop/r', namespace: 'shop', created: '2026-01-01T00:00:00Z', zone: ZONE, endpoints });

function served(endpoints: readonly GatewayEndpoint[], geoCode?: string) {
  const { recordSet } = buildRecordSet({ ...base, gateway: { zones: [ZONE], geoCode, ttls: DEFAULTS.gatewayTtls, owners: [record(endpoints)] } }, new Map());
  const r = recordSet.names.find((n) => n.name === APP);
  return r && [...r.v4, ...r.v6];
}

test('an A of weight 0 beside an AAAA of another set is still the A answer: weight 0 drains within a family', () => {
  assert.equal(served([ep(APP, 'A', '192.0.2.1', { setIdentifier: 'a', weight: 0 }), ep(APP, 'AAAA', '2001:db8::1', { setIdentifier: 'b', weight: 10 })]), ['192.0.2.1', '2001:db8::1']);
});

test('the geo asked for is served though its CNAME weighs 0 beside another geo: weight 0 drains among the targets picked from, after the geo', () => {
  const endpoints = [
    ep(APP, 'CNAME', KLB),
    ep(KLB, 'CNAME', `eu.${KLB}`, { setIdentifier: 'eu', geo: 'eu', weight: 0 }),
    ep(KLB, 'CNAME', `us.${KLB}`, { setIdentifier: 'us', geo: 'us', weight: 100 }),
    ep(`eu.${KLB}`, 'A', '192.0.2.1'),
    ep(`us.${KLB}`, 'A', '192.0.2.2'),
  ];
  assert.equal(served(endpoints, 'eu'), ['192.0.2.1']);
});

test.run();
