/**
 * The DNSRecords given to the admin's DNS (print-records, check-dns): one answer a name, the
 * one CoreDNS serves.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adminDnsRecords } from '../lib/resolve/admin-records.js';
import type { ExtraRecord } from '../lib/model.js';

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

test.run();
