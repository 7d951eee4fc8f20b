/**
 * Gateway zone files: what goes in them, and when one is rewritten. What CoreDNS answers from
 * them is specified in gateway-dns.test.ts, on real CoreDNS.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NameRecord } from '../lib/model.js';
import { checkCorefile } from '../lib/render/corefile-check.js';
import { formatZoneFile, isZoneFile, nextSerial, parseZoneFile, splitByZone, zoneOf, zoneRecords } from '../lib/render/zone-file.js';
import { writeZoneFile } from '../lib/sinks/zone-file-output.js';

const record = (name: string, fields: Partial<NameRecord> = {}): NameRecord => ({ name, v4: [], v6: [], source: 'test', ...fields });

test('a name belongs to the longest zone it lies in; a wildcard to the zone of its parent', () => {
  const zones = ['gw.example.net', 'eu.gw.example.net'];
  assert.is(zoneOf('shop.eu.gw.example.net', zones), 'eu.gw.example.net');
  assert.is(zoneOf('shop.gw.example.net', zones), 'gw.example.net');
  assert.is(zoneOf('*.gw.example.net', zones), 'gw.example.net');
  assert.is(zoneOf('api.c1.example.com', zones), undefined);
  assert.is(zoneOf('xgw.example.net', zones), undefined, 'a label ending in the zone is not under it');
});

test("the cluster's own names stay in the Corefile, every Gateway name goes to its zone", () => {
  const { rest, byZone } = splitByZone([record('api.c1.example.com'), record('a.gw.example.net'), record('*.apps.c1.example.com')], ['gw.example.net']);
  assert.equal(rest.map((r) => r.name), ['api.c1.example.com', '*.apps.c1.example.com']);
  assert.equal(byZone.get('gw.example.net')?.map((r) => r.name), ['a.gw.example.net']);
});

test('a chained name writes its first hop only; an address name its addresses at its own TTL', () => {
  const text = zoneRecords(
    [
      record('shop.gw.example.net', { v4: ['192.0.2.1'], chain: [{ owner: 'shop.gw.example.net', target: 'klb.shop.gw.example.net', ttl: 300 }, { owner: 'klb.shop.gw.example.net', target: 'x', ttl: 60 }] }),
      record('leaf.gw.example.net', { v4: ['192.0.2.1'], v6: ['2001:db8::1'], addressTtl: 60 }),
      record('simple.gw.example.net', { v4: ['192.0.2.2'] }),
    ],
    30,
  );
  assert.equal(text.split('\n'), [
    'shop.gw.example.net. 300 IN CNAME klb.shop.gw.example.net.',
    'leaf.gw.example.net. 60 IN A 192.0.2.1',
    'leaf.gw.example.net. 60 IN AAAA 2001:db8::1',
    'simple.gw.example.net. 30 IN A 192.0.2.2',
  ]);
});

test('the next serial is the time, or one more than the last when the time is not past it', () => {
  assert.is(nextSerial(undefined, 1_800_000_000), 1_800_000_000);
  assert.is(nextSerial(1_700_000_000, 1_800_000_000), 1_800_000_000);
  assert.is(nextSerial(1_800_000_000, 1_800_000_000), 1_800_000_001, 'two changes in one second still differ');
  assert.is(nextSerial(2 ** 32 - 1, 5), 0, 'kept within the 32 bits of the SOA field');
});

let dir = '';
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lbdns-zone-'));
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a zone file with the same records is left alone; new records get a new serial even within the second', async () => {
  const path = join(dir, 'gw.example.net.zone');
  const a = 'a.gw.example.net. 60 IN A 192.0.2.1';
  assert.ok((await writeZoneFile(path, 'gw.example.net', a, 1000)).written);
  const first = await stat(path);
  assert.not.ok((await writeZoneFile(path, 'gw.example.net', a, 2000)).written, 'same records: untouched, whatever the time');
  assert.is((await stat(path)).ino, first.ino);
  assert.ok((await writeZoneFile(path, 'gw.example.net', 'a.gw.example.net. 60 IN A 192.0.2.2', 1000)).written);
  assert.equal(parseZoneFile(await readFile(path, 'utf8')), { serial: 1001, records: 'a.gw.example.net. 60 IN A 192.0.2.2' });
});

test('a FIFO where a zone file goes is refused, as at the Corefile, not waited on', async () => {
  const path = join(dir, 'fifo.gw.example.net.zone');
  await promisify(execFile)('mkfifo', [path]);
  const outcome = await writeZoneFile(path, 'gw.example.net', 'a.gw.example.net. 60 IN A 192.0.2.1', 1000).then(() => 'written', (err: Error) => err.message);
  assert.match(outcome, 'it exists and is not a regular file');
});

test('a zone file holds the SOA and the apex NS before its records, and reads back its serial and records', () => {
  const text = formatZoneFile('gw.example.net', 7, 'a.gw.example.net. 60 IN A 192.0.2.1');
  assert.equal(text.split('\n').slice(1, 3), ['gw.example.net. 30 IN SOA ns.lbdns.invalid. hostmaster.lbdns.invalid. 7 3600 600 86400 30', 'gw.example.net. 30 IN NS ns.lbdns.invalid.']);
  assert.equal(parseZoneFile(text), { serial: 7, records: 'a.gw.example.net. 60 IN A 192.0.2.1' });
  assert.equal(parseZoneFile(formatZoneFile('gw.example.net', 8, '')), { serial: 8, records: '' });
});

test('a zone file written before the apex NS line reads back its records, and is written again with the NS and the next serial', async () => {
  const old = '; Generated by lbdns: x\ngw.example.net. 30 IN SOA ns.lbdns.invalid. hostmaster.lbdns.invalid. 7 3600 600 86400 30\na.gw.example.net. 60 IN A 192.0.2.1\n';
  assert.equal(parseZoneFile(old), { serial: 7, records: 'a.gw.example.net. 60 IN A 192.0.2.1' });
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-zone-'));
  try {
    const path = join(dir, 'gw.example.net.zone');
    await writeFile(path, old);
    assert.ok((await writeZoneFile(path, 'gw.example.net', 'a.gw.example.net. 60 IN A 192.0.2.1', 5)).written);
    assert.is(await readFile(path, 'utf8'), formatZoneFile('gw.example.net', 8, 'a.gw.example.net. 60 IN A 192.0.2.1'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the Corefile check refuses a file directive for a zone outside its server block', () => {
  assert.throws(() => checkCorefile('gw.example.net {\n    file /var/lib/lbdns/x.zone other.example.net\n}\n'), /file: zone "other\.example\.net" is not within the server block's zones/);
  assert.throws(() => checkCorefile('gw.example.net {\n    file "/var/lib/my zone" gw.example.net\n}\n'), /is not a plain path/);
  assert.throws(() => checkCorefile('gw.example.net {\n    file /z gw.example.net {\n        reload soon\n    }\n}\n'), /reload "soon" is not a Go duration/);
  // CoreDNS panics on it at start (time.NewTicker): a crash loop.
  assert.throws(() => checkCorefile('gw.example.net {\n    file /z gw.example.net {\n        reload -1s\n    }\n}\n'), /reload "-1s" is negative/);
  checkCorefile('gw.example.net:5353 {\n    file /z gw.example.net {\n        reload 1s\n    }\n}\n');
});

test('the Corefile check refuses fallthrough in a file block: CoreDNS before 1.12.2 (OpenShift 4.19 and older) refuses the whole file for it', () => {
  assert.throws(() => checkCorefile('gw.example.net:5353 {\n    file /z gw.example.net {\n        reload 1s\n        fallthrough\n    }\n}\n'), /file: "fallthrough" is unknown to the file plugin before CoreDNS 1\.12\.2 \(OpenShift 4\.19 and older\)/);
});

test('a zone file is recognised in place exactly when it is the text formatZoneFile makes', () => {
  const records = 'a.gw.example.net. 60 IN A 192.0.2.1\nb.gw.example.net. 60 IN A 192.0.2.2';
  for (const [zone, serial, recs] of [['gw.example.net', 7, records], ['gw.example.net', 7, '']] as const) {
    const text = formatZoneFile(zone, serial, recs);
    assert.ok(isZoneFile(text, zone, serial, recs));
    assert.not.ok(isZoneFile(text, zone, serial + 1, recs));
    assert.not.ok(isZoneFile(`${text}\n`, zone, serial, recs));
    assert.not.ok(isZoneFile(text.slice(0, -1), zone, serial, recs));
    assert.not.ok(isZoneFile(text, 'other.example.net', serial, recs));
  }
  const text = formatZoneFile('gw.example.net', 7, records);
  assert.not.ok(isZoneFile(text, 'gw.example.net', 7, records.replace('192.0.2.2', '192.0.2.3')));
  assert.not.ok(isZoneFile(`${text.slice(0, -1)} `, 'gw.example.net', 7, records));
});

test.run();
