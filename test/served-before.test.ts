/**
 * What the files on disk served, read back when the process starts again: the last known good
 * of a name whose host names do not resolve at the start. A restart while the upstream DNS
 * fails is specified on the real programs in watch-lb-status.test.ts and gateway-dns.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { DEFAULTS, type ClusterSpec, type NameRecord, type Resolution } from '../lib/model.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { renderZones, zoneOwners } from '../lib/render/zone-file.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { readServedBefore } from '../lib/sinks/served-before.js';
import { writeZoneFiles, zoneFilePaths } from '../lib/sinks/zone-file-output.js';
import { weightFilePath, writeWeightFile } from '../lib/sinks/weight-file-output.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { dnsPolicy, gateway, KUBE_SYSTEM, ZONE } from './support/gateway-fixture.js';

const LB_HOST = 'lb-1.elb.example.org';

/** The example cluster with a simple Gateway (an IP, and one with a Hostname address) and a load-balanced one. */
function spec(): ClusterSpec {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('gateways', [
    gateway('simple', [{ name: 'l', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.1' }, { value: '2001:db8::1' }]),
    gateway('external', [{ name: 'l', hostname: `ext.${ZONE}` }], [{ type: 'Hostname', value: LB_HOST }]),
    gateway('balanced', [{ name: 'l', hostname: `*.lb.${ZONE}` }], [{ value: '192.0.2.7' }]),
  ]);
  inputs.set('dnspolicies', [dnsPolicy('simple', { gateway: 'simple' }), dnsPolicy('external', { gateway: 'external' }), dnsPolicy('balanced', { gateway: 'balanced' }, { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } })]);
  const base = specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']);
  return { ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners: inputs.contribution().gatewayOwners ?? [] } };
}

async function withWritten(body: (out: string, names: readonly NameRecord[]) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-served-before-'));
  try {
    const out = join(dir, 'Corefile');
    const resolutions = new Map<string, Resolution>([[LB_HOST, { v4: ['198.51.100.7'], v6: [] } as unknown as Resolution]]);
    const { recordSet } = buildRecordSet(spec(), resolutions);
    const served = { ...recordSet, weightFile: weightFilePath(out), zoneFiles: zoneFilePaths(out, [ZONE]) };
    await writeWeightFile(served.weightFile, served.weights ?? []);
    await writeZoneFiles(served, renderZones(served));
    await writeFile(out, renderCorefile(served, builtinTemplate(), 'builtin'));
    await body(out, recordSet.names);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const shape = (n: NameRecord) => ({ name: n.name, v4: n.v4, v6: n.v6, chain: n.chain ?? [] });

test("every name the Corefile's templates and the zone files served is read back with its addresses and chain", async () => {
  await withWritten(async (out, names) => {
    const before = await readServedBefore(out, zoneFilePaths(out, [ZONE]));
    const external = `ext.${ZONE}`;
    assert.equal(before.map(shape), names.map((n) => (n.name === external ? { ...shape(n), v4: [], v6: [] } : shape(n))));
  });
});

test('a zone file the Corefile on disk does not name is not read back: it is left from a zone dropped since, and nobody was served its records', async () => {
  await withWritten(async (out) => {
    const { recordSet } = buildRecordSet(specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']), new Map());
    await writeFile(out, renderCorefile(recordSet, builtinTemplate(), 'builtin'));
    const before = await readServedBefore(out, zoneFilePaths(out, [ZONE]));
    assert.ok(before.length > 0, 'the cluster names are read back');
    assert.equal(before.filter((n) => n.name.endsWith(ZONE)), []);
  });
});

test('a chain that leaves the zone is read back to its last in-zone hop, with no addresses: CoreDNS asks the upstreams for them', async () => {
  await withWritten(async (out) => {
    const ext = (await readServedBefore(out, zoneFilePaths(out, [ZONE]))).find((n) => n.name === `ext.${ZONE}`);
    assert.equal(ext?.chain, [{ owner: `ext.${ZONE}`, target: LB_HOST, ttl: 60 }]);
    assert.equal([ext?.v4, ext?.addressOwner], [[], LB_HOST]);
  });
});

test('a name a custom template answers in two server blocks reads back with each address once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-served-before-'));
  try {
    const block = (listen: string) => `.:53 {\n    bind ${listen}\n    template IN A api.c1.example.com {\n        match ^api\\.c1\\.example\\.com\\.$\n        answer "{{ .Name }} 60 IN A 10.0.0.10"\n        fallthrough\n    }\n    forward . 10.0.0.2\n}\n`;
    await writeFile(join(dir, 'Corefile'), block('127.0.0.1') + block('::1'));
    assert.equal((await readServedBefore(join(dir, 'Corefile'), new Map())).map((n) => [n.name, n.v4]), [['api.c1.example.com', ['10.0.0.10']]]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a zone file line lbdns would not write (cut short, edited by hand) is not read back, so it is never written again for CoreDNS to refuse', () => {
  const owners = zoneOwners(
    [
      'shop.gw.example.com. 60 IN A 192.0.2.10',
      'shop.gw.example.com. 60 IN A 192.0.2.',
      'six.gw.example.com. 60 IN A 2001:db8::1',
      'four.gw.example.com. 60 IN AAAA 192.0.2.1',
      'long.gw.example.com. 4294967296 IN A 192.0.2.2',
      'rel.gw.example.com. 60 IN CNAME bar',
      'Bad_Name.gw.example.com. 60 IN A 192.0.2.3',
      'ok.gw.example.com. 60 IN CNAME shop.gw.example.com.',
    ].join('\n'),
  );
  assert.equal(Object.fromEntries(owners), {
    'shop.gw.example.com': { v4: ['192.0.2.10'], v6: [], ttl: 60 },
    'ok.gw.example.com': { v4: [], v6: [], cname: { target: 'shop.gw.example.com', ttl: 60 } },
  });
});

test('a cluster name whose LB host name gives more than 16 addresses at the start keeps what it served before, and the rest is written', () => {
  const base = specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']);
  const apiLb = 'api-lb.elb.example.org';
  const cluster = { ...base, lbs: { ...base.lbs, api: [{ kind: 'hostname' as const, hostname: apiLb }] } };
  const api = `api.${base.domain}`;
  const resolutions = new Map<string, Resolution>([[apiLb, { v4: Array.from({ length: 17 }, (_, i) => `198.51.100.${i + 1}`), v6: [] } as unknown as Resolution]]);
  const { recordSet, held } = buildRecordSet(cluster, resolutions, { servedBefore: [{ name: api, v4: ['10.0.0.10'], v6: [], source: 'api' }] });
  assert.equal(recordSet.names.find((n) => n.name === api)?.v4, ['10.0.0.10']);
  assert.ok(held.some((h) => h.name === api && /more than the limit of 16/.test(h.reason)));
  assert.ok(recordSet.names.some((n) => n.name === `api-int.${base.domain}`));
});

test('a cluster name of two LB host names, one with no answer yet, keeps what it served before besides the resolved one while the hold lasts, and serves the resolved one alone after', () => {
  const base = specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']);
  const [h1, h2] = ['router-a.elb.example.org', 'router-b.elb.example.org'];
  const cluster = { ...base, lbs: { ...base.lbs, ingress: [{ kind: 'hostname' as const, hostname: h1 }, { kind: 'hostname' as const, hostname: h2 }] } };
  const apps = `*.apps.${base.domain}`;
  const resolutions = new Map<string, Resolution>([[h1, { hostname: h1, v4: ['198.51.100.3'], v6: [] } as unknown as Resolution]]);
  const servedBefore = [{ name: apps, v4: ['198.51.100.1', '198.51.100.2'], v6: [], source: 'ingress' }];
  const during = buildRecordSet(cluster, resolutions, { servedBefore, holdUnresolved: true });
  assert.equal(during.recordSet.names.find((n) => n.name === apps)?.v4, ['198.51.100.1', '198.51.100.2', '198.51.100.3']);
  assert.ok(during.held.some((x) => x.name === apps && x.reason.includes(h2)));
  const after = buildRecordSet(cluster, resolutions, { servedBefore });
  assert.equal(after.recordSet.names.find((n) => n.name === apps)?.v4, ['198.51.100.3']);
  assert.equal(after.held, []);
});

test('no Corefile, or one that does not parse, reads back as nothing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-served-before-'));
  try {
    assert.equal(await readServedBefore(join(dir, 'Corefile'), new Map()), []);
    await writeFile(join(dir, 'Corefile'), '. {\n    forward . 10.0.0.2\n');
    assert.equal(await readServedBefore(join(dir, 'Corefile'), new Map()), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
