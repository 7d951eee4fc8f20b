/**
 * The DNSRecords given to the admin's DNS (print-records, check-dns): one answer a name, the
 * one CoreDNS serves.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adminDnsRecords } from '../lib/resolve/admin-records.js';
import type { ExtraRecord, NameRecord } from '../lib/model.js';
import { planGatewayGroups, sectionsByZone } from '../lib/render/records-format.js';

const record = (name: string, source: string, ip: string): ExtraRecord => ({ name, source, targets: [{ kind: 'ip', ip }] });
const shown = (given: ReturnType<typeof adminDnsRecords>) => given.map((g) => [g.record.source, g.policy, g.record.targets.map((t) => (t.kind === 'ip' ? t.ip : t.hostname)), g.givenBy]);

test('Managed records of one name are given as one, with every target, as CoreDNS merges them', () => {
  const given = adminDnsRecords([record('a.c1.example.com', 'config', '10.0.0.1'), record('a.c1.example.com', 'dnsrecord/ns/a', '10.0.0.2')], []);
  assert.equal(shown(given), [
    ['config', 'Managed', ['10.0.0.1', '10.0.0.2'], undefined],
    ['dnsrecord/ns/a', 'Managed', ['10.0.0.2'], 'config'],
  ]);
});

test('an Unmanaged record of a name a Managed one has is not given; of two Unmanaged ones, the first is', () => {
  const given = adminDnsRecords([record('a.c1.example.com', 'dnsrecord/ns/m', '10.0.0.1')], [record('a.c1.example.com', 'dnsrecord/ns/u', '10.0.0.9'), record('b.c1.example.com', 'dnsrecord/ns/b1', '10.0.0.3'), record('b.c1.example.com', 'dnsrecord/ns/b2', '10.0.0.4')]);
  assert.equal(shown(given), [
    ['dnsrecord/ns/u', 'Unmanaged', ['10.0.0.9'], 'dnsrecord/ns/m'],
    ['dnsrecord/ns/b1', 'Unmanaged', ['10.0.0.3'], undefined],
    ['dnsrecord/ns/b2', 'Unmanaged', ['10.0.0.4'], 'dnsrecord/ns/b1'],
    ['dnsrecord/ns/m', 'Managed', ['10.0.0.1'], undefined],
  ]);
});

const chained = (name: string, hops: readonly [string, string][], owner: string, v4: readonly string[]): NameRecord => ({
  name,
  v4,
  v6: [],
  source: 'dnsrecord.kuadrant.io/ns/r',
  chain: hops.map(([from, to]) => ({ owner: from, target: to, ttl: 60 })),
  addressOwner: owner,
});

test("a Gateway name's chain that ends at a load balancer's host name is given up to its CNAME, without that host name's addresses", () => {
  const name = 'shop.gw.example.com';
  const groups = planGatewayGroups([{ name, source: 'dnsrecord.kuadrant.io/ns/r' }], [chained(name, [[name, 'lb-1.elb.example.net']], 'lb-1.elb.example.net', ['198.51.100.1'])], 60, ['gw.example.com']);
  assert.equal(groups.flatMap((g) => g.records.map((r) => `${r.name} ${r.type} ${r.value}`)), [`${name} CNAME lb-1.elb.example.net`]);
});

test("each record of a chain is given in the section of the zone its owner lies in, whatever zone the chain starts in", () => {
  const name = 'x.gw2.example.org';
  const groups = planGatewayGroups([{ name, source: 'dnsrecord.kuadrant.io/ns/r' }], [chained(name, [[name, 'y.gw.example.com']], 'y.gw.example.com', ['192.0.2.1'])], 60, ['gw.example.com', 'gw2.example.org']);
  const sections = sectionsByZone('c1.example.com', ['gw.example.com', 'gw2.example.org'], groups);
  assert.equal(sections.map((z) => [z.zone, z.groups.flatMap((g) => g.records.map((r) => `${r.name} ${r.type}`))]), [
    ['gw.example.com', ['y.gw.example.com A']],
    ['gw2.example.org', [`${name} CNAME`]],
  ]);
});

test.run();
