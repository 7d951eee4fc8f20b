/**
 * Gateway DNS end to end: the monitor against the test API server serving the four CRDs
 * (Gateway, HTTPRoute, DNSPolicy, Kuadrant DNSRecord), the written Corefile served by the
 * CoreDNS emulator and asked over UDP.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { answersOf, readAnswers, sleep, startMonitor, until, type ClusterFixture, type RunningMonitor } from './support/cluster-fixture.js';
import { startCorefileServer } from './support/corefile-server.js';
import { ask, dnsPolicy, gateway, httpRoute, kuadrantRecord, NS, startGatewayCluster, ZONE } from './support/gateway-fixture.js';
import { DOMAIN, UPSTREAM } from './support/cluster-fixture.js';
import { runLbdns } from './support/run-cli.js';
import { startDnsServer } from './support/dns-server.js';

const APP = `app.${ZONE}`;

async function withGatewayMonitor(body: (c: ClusterFixture, m: RunningMonitor) => Promise<void>, flags: { geoCode?: string } = {}): Promise<void> {
  const cluster = await startGatewayCluster();
  let monitor: RunningMonitor | undefined;
  try {
    monitor = await startMonitor(cluster, { flags: { gatewayZones: [ZONE], upstreams: ['127.0.0.1'], ...flags } });
    await body(cluster, monitor);
    assert.is(await monitor.stop(), 0);
  } finally {
    await monitor?.stop();
    await cluster.close();
  }
}

const served = async (c: ClusterFixture, name: string): Promise<readonly string[]> => answersOf(c.out, name);
const has = (c: ClusterFixture, name: string, answer: string) => async () => (await served(c, name)).includes(answer);
const gone = (c: ClusterFixture, name: string) => async () => (await readAnswers(c.out))?.names.has(name) === false;

async function askCorefile(c: ClusterFixture, name: string, type: 'A' | 'AAAA' = 'A'): Promise<string[]> {
  const server = await startCorefileServer(await readFile(c.out, 'utf8'));
  try {
    return await ask(server, name, type);
  } finally {
    await server.close();
  }
}

test('a simple DNSPolicy serves each listener host with A records of every Gateway address', async () => {
  await withGatewayMonitor(async (c) => {
    c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }, { value: '192.0.2.11' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the Gateway host on disk', has(c, APP, 'A 192.0.2.11'));
    assert.equal(await served(c, APP), ['A 192.0.2.10', 'A 192.0.2.11']);
    assert.equal((await askCorefile(c, APP)).sort(), [`${APP} A 192.0.2.10`, `${APP} A 192.0.2.11`]);
  });
});

test('a Gateway address change is rewritten into the Corefile', async () => {
  await withGatewayMonitor(async (c) => {
    c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the first address', has(c, APP, 'A 192.0.2.10'));
    c.server.patchStatus({ resource: 'gateways', namespace: NS, name: 'gw' }, { addresses: [{ type: 'IPAddress', value: '192.0.2.99' }] });
    await until('the new address', has(c, APP, 'A 192.0.2.99'));
    assert.equal(await served(c, APP), ['A 192.0.2.99']);
  });
});

test('a listener with no attached route is not served, and is once a route attaches', async () => {
  await withGatewayMonitor(async (c) => {
    const other = `other.${ZONE}`;
    c.server.create(gateway('gw', [{ name: 'http', hostname: APP }, { name: 'idle', hostname: other, attachedRoutes: 0 }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the attached listener', has(c, APP, 'A 192.0.2.10'));
    assert.not.ok((await readAnswers(c.out))?.names.has(other));
    c.server.patchStatus({ resource: 'gateways', namespace: NS, name: 'gw' }, { listeners: [{ name: 'http', attachedRoutes: 1, supportedKinds: [], conditions: [] }, { name: 'idle', attachedRoutes: 2, supportedKinds: [], conditions: [] }] });
    await until('the listener once attached', has(c, other, 'A 192.0.2.10'));
  });
});

test('a DNSPolicy with a sectionName serves only that listener', async () => {
  await withGatewayMonitor(async (c) => {
    const other = `other.${ZONE}`;
    c.server.create(gateway('gw', [{ name: 'http', hostname: APP }, { name: 'admin', hostname: other }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw', sectionName: 'admin' }));
    await until('the targeted listener', has(c, other, 'A 192.0.2.10'));
    assert.not.ok((await readAnswers(c.out))?.names.has(APP));
  });
});

test('a listener without a hostname serves the host names of the HTTPRoutes it accepted', async () => {
  await withGatewayMonitor(async (c) => {
    c.server.create(gateway('gw', [{ name: 'http' }], [{ value: '192.0.2.10' }]));
    c.server.create(httpRoute('shop', [`shop.${ZONE}`, `cart.${ZONE}`], { gateway: 'gw' }));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('both route hosts', async () => (await has(c, `shop.${ZONE}`, 'A 192.0.2.10')()) && (await has(c, `cart.${ZONE}`, 'A 192.0.2.10')()));
  });
});

test('a load-balanced wildcard listener is served as *.x → klb.x → geo → leaf, answered in one response', async () => {
  await withGatewayMonitor(async (c) => {
    const wildcard = `*.apps.${ZONE}`;
    c.server.create(gateway('gw', [{ name: 'http', hostname: wildcard }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    await until('the wildcard', has(c, wildcard, 'A 192.0.2.10'));
    const answer = await askCorefile(c, `shop.apps.${ZONE}`);
    const klb = `klb.apps.${ZONE}`;
    assert.equal(answer.slice(0, 2), [`shop.apps.${ZONE} CNAME ${klb}`, `${klb} CNAME geo-eu.${klb}`]);
    assert.match(answer[2] ?? '', new RegExp(`^geo-eu\\.${klb.replaceAll('.', '\\.')} CNAME [0-9a-f]{12}\\.${klb.replaceAll('.', '\\.')}$`));
    assert.match(answer[3] ?? '', / A 192\.0\.2\.10$/);
    assert.is(answer.length, 4);
    assert.equal((await askCorefile(c, klb)).at(-1)?.endsWith(' A 192.0.2.10'), true, 'an intermediate name answers too');
  });
});

/** Three Gateways of one namespace share app.zone: EU at weights 200 and 50 (EU the default geo), NA at 100. */
function seedGeoAndWeights(c: ClusterFixture): void {
  c.server.create(gateway('eu-a', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.1' }]));
  c.server.create(gateway('eu-b', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.2' }]));
  c.server.create(gateway('na', [{ name: 'http', hostname: APP }], [{ value: '198.51.100.1' }]));
  c.server.create(dnsPolicy('eu-a', { gateway: 'eu-a' }, { loadBalancing: { weight: 200, geo: 'GEO-EU', defaultGeo: true } }));
  c.server.create(dnsPolicy('eu-b', { gateway: 'eu-b' }, { loadBalancing: { weight: 50, geo: 'GEO-EU', defaultGeo: true } }));
  c.server.create(dnsPolicy('na', { gateway: 'na' }, { loadBalancing: { weight: 100, geo: 'GEO-NA', defaultGeo: false } }));
}

test('load-balanced with two geos and two weights: the default geo answers with both weighted targets, first address by weight', async () => {
  await withGatewayMonitor(async (c) => {
    seedGeoAndWeights(c);
    await until('the EU addresses', async () => (await served(c, APP)).length === 2);
    assert.equal(await served(c, APP), ['A 192.0.2.1', 'A 192.0.2.2']);
    const weights = await readFile(join(c.dir, 'Corefile.weights'), 'utf8');
    assert.match(weights, new RegExp(`\\ngeo-eu\\.klb\\.app\\.gw\\.example\\.net\\.\\n192\\.0\\.2\\.1 200\\n192\\.0\\.2\\.2 50\\n`));
    const server = await startCorefileServer(await readFile(c.out, 'utf8'));
    try {
      let first = 0;
      for (let i = 0; i < 100; i++) {
        const answer = await ask(server, APP, 'A');
        assert.equal(answer.slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME geo-eu.klb.${APP}`]);
        if (answer[2] === `geo-eu.klb.${APP} A 192.0.2.1`) first++;
      }
      assert.ok(first > 65 && first < 95, `weight 200 of 250 came first ${first} times in 100`);
    } finally {
      await server.close();
    }
  });
});

test('--geo-code picks that geo of a load-balanced name', async () => {
  await withGatewayMonitor(
    async (c) => {
      seedGeoAndWeights(c);
      await until('the NA address', has(c, APP, 'A 198.51.100.1'));
      assert.equal(await served(c, APP), ['A 198.51.100.1']);
      assert.equal((await askCorefile(c, APP)).slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME geo-na.klb.${APP}`]);
    },
    { geoCode: 'GEO-NA' },
  );
});

test('a Kuadrant DNSRecord labelled with a gateway zone is served, one without the label is not', async () => {
  await withGatewayMonitor(async (c) => {
    c.server.create(kuadrantRecord('kuadrant', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.5'] }, { dnsName: `www.${ZONE}`, recordType: 'CNAME', targets: [APP] }]));
    const unlabelled = kuadrantRecord('other', `other.${ZONE}`, [{ dnsName: `other.${ZONE}`, recordType: 'A', targets: ['203.0.113.6'] }]);
    c.server.create({ ...unlabelled, metadata: { name: 'other', namespace: NS } });
    await until('the record', has(c, APP, 'A 203.0.113.5'));
    await until('the CNAME', has(c, `www.${ZONE}`, 'A 203.0.113.5'));
    assert.equal(await askCorefile(c, `www.${ZONE}`), [`www.${ZONE} CNAME ${APP}`, `${APP} A 203.0.113.5`]);
    assert.not.ok((await readAnswers(c.out))?.names.has(`other.${ZONE}`));
  });
});

test('names outside the zones, under api-int and claimed by an older owner are refused, logged once and counted', async () => {
  await withGatewayMonitor(async (c, m) => {
    c.server.create(kuadrantRecord('first', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.5'] }]));
    await until('the first owner', has(c, APP, 'A 203.0.113.5'));
    await sleep(1100);
    c.server.create(kuadrantRecord('thief', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.66'] }], { namespace: 'tenant' }));
    c.server.create(kuadrantRecord('wide', 'www.example.org', [{ dnsName: 'www.example.org', recordType: 'A', targets: ['203.0.113.7'] }]));
    c.server.create(gateway('gw', [{ name: 'http', hostname: `x.api-int.${DOMAIN}` }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    c.server.create(gateway('gw2', [{ name: 'http', hostname: `late.${ZONE}` }], [{ value: '192.0.2.12' }]));
    c.server.create(dnsPolicy('dns2', { gateway: 'gw2' }));
    await until('a later change served', has(c, `late.${ZONE}`, 'A 192.0.2.12'));
    const refusals = m.logs().filter((l) => l.msg === 'gateway name refused; not served');
    const reasons = refusals.map((l) => `${String(l.name)} ${String(l.reason)}`).sort();
    assert.equal(reasons, [`${APP} other-owner`, 'www.example.org outside-zones', `x.api-int.${DOMAIN} outside-zones`]);
    assert.equal(await served(c, APP), ['A 203.0.113.5']);
    const metrics = await (await fetch(`http://${m.health}/metrics`)).text();
    assert.match(metrics, /lbdns_names_refused_total\{source="dnsrecord.kuadrant.io",reason="other-owner"\} 1/);
    assert.match(metrics, /lbdns_names_refused_total\{source="dnsrecord.kuadrant.io",reason="outside-zones"\} 1/);
  });
});

test('a name of the cluster inside a gateway zone is refused', async () => {
  const cluster = await startGatewayCluster();
  let monitor: RunningMonitor | undefined;
  try {
    monitor = await startMonitor(cluster, { flags: { gatewayZones: [DOMAIN], upstreams: ['127.0.0.1'] } });
    cluster.server.create(kuadrantRecord('k', `x.api-int.${DOMAIN}`, [{ dnsName: `x.api-int.${DOMAIN}`, recordType: 'A', targets: ['203.0.113.9'] }, { dnsName: `*.${DOMAIN}`, recordType: 'A', targets: ['203.0.113.9'] }, { dnsName: `ok.${DOMAIN}`, recordType: 'A', targets: ['203.0.113.9'] }], { zone: DOMAIN }));
    await until('the allowed name', has(cluster, `ok.${DOMAIN}`, 'A 203.0.113.9'));
    const reasons = monitor.logs().filter((l) => l.msg === 'gateway name refused; not served').map((l) => `${String(l.name)} ${String(l.reason)}`).sort();
    assert.equal(reasons, [`*.${DOMAIN} cluster-name`, `x.api-int.${DOMAIN} cluster-name`]);
    assert.is(await monitor.stop(), 0);
  } finally {
    await monitor?.stop();
    await cluster.close();
  }
});

test('a deleted DNSPolicy takes its names with it', async () => {
  await withGatewayMonitor(async (c) => {
    c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the name', has(c, APP, 'A 192.0.2.10'));
    c.server.delete({ resource: 'dnspolicies', namespace: NS, name: 'dns' });
    await until('the name gone', gone(c, APP));
  });
});

/** Record lines of a zone printout: "NAME TTL IN TYPE RDATA". */
const recordLines = (zone: string): string[] => zone.split('\n').filter((l) => l !== '' && !l.startsWith(';') && !l.startsWith('$')).map((l) => l.trim().split(/\s+/).join(' '));

test('print-records --names gateway prints what lbdns serves for Gateway names: a chain for a load-balanced one, addresses for a simple one', async () => {
  const cluster = await startGatewayCluster();
  try {
    cluster.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.20' }]));
    cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--gateway-zone', ZONE, '--names', 'gateway', '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const lines = recordLines(r.stdout);
    const klb = `klb.${APP}`;
    assert.is(lines[0], `${APP}. 300 IN CNAME ${klb}.`);
    assert.is(lines[1], `${klb}. 300 IN CNAME geo-eu.${klb}.`);
    assert.match(lines[2] ?? '', new RegExp(`^geo-eu\\.${klb.replaceAll('.', '\\.')}\\. 60 IN CNAME [0-9a-f]{12}\\.${klb.replaceAll('.', '\\.')}\\.$`));
    assert.match(lines[3] ?? '', / 60 IN A 192\.0\.2\.10$/);
    assert.equal(lines.slice(4), [`shop.${ZONE}. 60 IN A 192.0.2.20`], 'each record once');
    assert.match(r.stdout, new RegExp(`; ${APP.replaceAll('.', '\\.')}: Gateway DNS dnspolicy/${NS}/dns`));
  } finally {
    await cluster.close();
  }
});

test("check-dns --names gateway checks the admin's DNS for each Gateway name lbdns serves", async () => {
  const cluster = await startGatewayCluster();
  const admin = await startDnsServer();
  try {
    cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.20' }]));
    cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
    const args = ['check-dns', cluster.kubeconfig, '--gateway-zone', ZONE, '--names', 'gateway', '--server', admin.address, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--output', 'json'];
    const missing = await runLbdns(args);
    assert.is(missing.code, 3, missing.stderr);
    admin.set(`shop.${ZONE}`, { A: ['192.0.2.20'] });
    const ok = await runLbdns(args);
    assert.is(ok.code, 0, ok.stderr);
    assert.equal((JSON.parse(ok.stdout) as { checks: { name: string; verdict: string }[] }).checks.map((x) => [x.name, x.verdict]), [[`shop.${ZONE}`, 'ok']]);
  } finally {
    await admin.close();
    await cluster.close();
  }
});

test.run();
