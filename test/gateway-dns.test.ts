/**
 * Gateway DNS end to end: the monitor against the test API server serving the four CRDs
 * (Gateway, HTTPRoute, DNSPolicy, Kuadrant DNSRecord), and real CoreDNS serving what it wrote
 * (the Corefile and the zone files beside it), asked over UDP: what a client gets is the truth.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { node, sleep, startMonitor, until, type ClusterFixture, type RunningMonitor } from './support/cluster-fixture.js';
import { answerOf, query, servableFlags, startCoreDns, type CoreDns } from './support/coredns.js';
import { dnsPolicy, gateway, httpRoute, kuadrantRecord, leafName, NS, startGatewayCluster, ZONE } from './support/gateway-fixture.js';
import { DOMAIN, UPSTREAM } from './support/cluster-fixture.js';
import { runLbdns } from './support/run-cli.js';
import { ValidationError } from '../lib/errors.js';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';

const APP = `app.${ZONE}`;

interface Served {
  readonly c: ClusterFixture;
  readonly m: RunningMonitor;
  /** Real CoreDNS serving the monitor's files. */
  readonly dns: CoreDns;
  /** The upstream CoreDNS forwards to. */
  readonly upstream: DnsTestServer;
  /** Stops the monitor and starts it again on the same files, as a pod restart does. */
  restart(): Promise<RunningMonitor>;
}

async function withGatewayMonitor(body: (s: Served) => Promise<void>, flags: { geoCode?: string; gatewayZones?: string[] } = {}): Promise<void> {
  const c = await startGatewayCluster();
  const upstream = await startDnsServer();
  let m: RunningMonitor | undefined;
  let dns: CoreDns | undefined;
  try {
    const listen = await servableFlags();
    const start = () => startMonitor(c, { flags: { gatewayZones: [ZONE], upstreams: [upstream.address], listen: listen.listen, healthPort: listen.healthPort, readyPort: listen.readyPort, ...flags } });
    m = await start();
    await until('the first Corefile', () => stat(c.out).then(() => true, () => false));
    dns = await startCoreDns(c.out, { port: listen.port });
    const restart = async () => {
      assert.is(await m?.stop(), 0);
      m = undefined;
      return (m = await start());
    };
    await body({ c, m, dns, upstream, restart });
    assert.is(await m.stop(), 0);
  } finally {
    await dns?.close();
    await m?.stop();
    await upstream.close();
    await c.close();
  }
}

/** The address records a client gets for `name` (A and AAAA, after any CNAMEs), as `A ip` / `AAAA ip`, sorted. */
async function served(dns: CoreDns, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const type of ['A', 'AAAA'] as const) {
    for (const rr of await answerOf(dns, name, type)) {
      const [, rrType, data] = rr.split(' ');
      if (rrType === type) out.push(`${type} ${data}`);
    }
  }
  return out.sort();
}
const has = (dns: CoreDns, name: string, answer: string) => async () => (await served(dns, name)).includes(answer);
const gone = (dns: CoreDns, name: string) => async () => (await served(dns, name)).length === 0;

test('a simple DNSPolicy serves each listener host with A records of every Gateway address', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }, { value: '192.0.2.11' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the Gateway host on disk', has(dns, APP, 'A 192.0.2.11'));
    assert.equal(await served(dns, APP), ['A 192.0.2.10', 'A 192.0.2.11']);
    assert.equal((await answerOf(dns, APP, 'A')).sort(), [`${APP} A 192.0.2.10`, `${APP} A 192.0.2.11`]);
  });
});

test('a Gateway address change is rewritten into the Corefile', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the first address', has(dns, APP, 'A 192.0.2.10'));
    await c.server.patchStatus({ resource: 'gateways', namespace: NS, name: 'gw' }, { addresses: [{ type: 'IPAddress', value: '192.0.2.99' }] });
    await until('the new address', has(dns, APP, 'A 192.0.2.99'));
    assert.equal(await served(dns, APP), ['A 192.0.2.99']);
  });
});

test('a Gateway address change reaches CoreDNS within 3 s with no Corefile rewrite and no reload', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('the first address', has(dns, APP, 'A 192.0.2.10'));
    const corefile = await stat(c.out);
    for (const ip of ['192.0.2.99', '192.0.2.98']) {
      await c.server.patchStatus({ resource: 'gateways', namespace: NS, name: 'gw' }, { addresses: [{ type: 'IPAddress', value: ip }] });
      await until(`${ip} answered`, has(dns, APP, `A ${ip}`), 3000);
      assert.equal(await served(dns, APP), [`A ${ip}`]);
    }
    const after = await stat(c.out);
    assert.equal([after.ino, after.mtimeMs], [corefile.ino, corefile.mtimeMs], 'the Corefile was not rewritten');
    assert.is(dns.reloads(), 0, 'CoreDNS did not reload');
  });
});

test('a listener with no attached route is not served, and is once a route attaches', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    const other = `other.${ZONE}`;
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }, { name: 'idle', hostname: other, attachedRoutes: 0 }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the attached listener', has(dns, APP, 'A 192.0.2.10'));
    assert.equal(await served(dns, other), []);
    await c.server.patchStatus({ resource: 'gateways', namespace: NS, name: 'gw' }, { listeners: [{ name: 'http', attachedRoutes: 1, supportedKinds: [], conditions: [] }, { name: 'idle', attachedRoutes: 2, supportedKinds: [], conditions: [] }] });
    await until('the listener once attached', has(dns, other, 'A 192.0.2.10'));
  });
});

test('a DNSPolicy with a sectionName serves only that listener', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    const other = `other.${ZONE}`;
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }, { name: 'admin', hostname: other }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw', sectionName: 'admin' }));
    await until('the targeted listener', has(dns, other, 'A 192.0.2.10'));
    assert.equal(await served(dns, APP), []);
  });
});

test('a listener without a hostname is not served (Kuadrant builds no record for it), whatever its routes name', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'any' }, { name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await c.server.create(httpRoute('shop', [`shop.${ZONE}`], { gateway: 'gw', sectionName: 'any' }));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the listener with a host name', has(dns, APP, 'A 192.0.2.10'));
    assert.equal(await served(dns, `shop.${ZONE}`), []);
  });
});

test('a load-balanced wildcard listener is served as *.x → klb.x → geo → leaf, answered in one response', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    const wildcard = `*.apps.${ZONE}`;
    await c.server.create(gateway('gw', [{ name: 'http', hostname: wildcard }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    await until('the wildcard', has(dns, wildcard, 'A 192.0.2.10'));
    const answer = await answerOf(dns, `shop.apps.${ZONE}`, 'A');
    const klb = `klb.apps.${ZONE}`;
    const leaf = await leafName(c, klb);
    assert.equal(answer, [`shop.apps.${ZONE} CNAME ${klb}`, `${klb} CNAME geo-eu.${klb}`, `geo-eu.${klb} CNAME ${leaf}`, `${leaf} A 192.0.2.10`]);
    assert.equal((await answerOf(dns, klb, 'A')).at(-1)?.endsWith(' A 192.0.2.10'), true, 'an intermediate name answers too');
  });
});

const eight = Array.from({ length: 8 }, (_, i) => ({ value: `192.0.2.${i + 1}` }));
const LB = { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } };

/** host → klb → geo → leaf CNAMEs, then the leaf's addresses: the whole chain, each record once. */
function assertChainOnce(answer: readonly string[], host: string, addresses: readonly string[]): void {
  const klb = `klb.${host.replace(/^\*\./, '')}`;
  assert.equal(answer.slice(0, 2), [`${host} CNAME ${klb}`, `${klb} CNAME geo-eu.${klb}`]);
  const leaf = /^geo-eu\.\S+ CNAME (\S+)$/.exec(answer[2] ?? '')?.[1];
  assert.ok(leaf?.endsWith(`.${klb}`), `the third record is the geo's CNAME to a leaf: ${answer[2]}`);
  assert.equal(answer.slice(3).sort(), addresses.map((ip) => `${leaf} A ${ip}`).sort());
  assert.is(new Set(answer).size, answer.length, 'no record twice');
}

test('a load-balanced Gateway of 8 addresses answers A with the chain and each address once', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], eight));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('all 8 addresses', async () => (await served(dns, APP)).length === 8);
    const reply = await query(dns, APP, 'A');
    assert.is(reply.rcode, 'NOERROR');
    assertChainOnce(reply.answers.map((a) => a.replace(/^(\S+) \d+ /, '$1 ')), APP, eight.map((a) => a.value));
  });
});

test('a load-balanced wildcard host answers a name under it with the chain and each address once', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: `*.shop.${ZONE}` }], eight));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('all 8 addresses', async () => (await served(dns, `x.shop.${ZONE}`)).length === 8);
    const answer = await answerOf(dns, `x.shop.${ZONE}`, 'A');
    assertChainOnce([answer[0]?.replace(/^x\./, '*.') ?? '', ...answer.slice(1)], `*.shop.${ZONE}`, eight.map((a) => a.value));
  });
});

test('16 addresses at the end of a load-balanced chain fit one UDP answer at EDNS 1232', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    const sixteen = Array.from({ length: 16 }, (_, i) => ({ value: `198.51.100.${i + 1}` }));
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], sixteen));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('all 16 addresses', async () => (await served(dns, APP)).length === 16);
    const reply = await query(dns, APP, 'A');
    assert.not.ok(reply.truncated);
    assert.ok(reply.bytes <= 1232, `${reply.bytes} bytes`);
    assert.is(reply.answers.length, 3 + 16);
  });
});

test('an IPv6-only Gateway answers AAAA through the chain and A with no address', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '2001:db8::7' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('the IPv6 address', has(dns, APP, 'AAAA 2001:db8::7'));
    const aaaa = await answerOf(dns, APP, 'AAAA');
    assert.is(aaaa.length, 4);
    assert.match(aaaa[3] ?? '', / AAAA 2001:db8::7$/);
    const a = await query(dns, APP, 'A');
    assert.is(a.rcode, 'NOERROR');
    assert.equal(a.answers.filter((rr) => / A /.test(rr)), []);
  });
});

test('other query types on served names are answered by lbdns, never forwarded', async () => {
  await withGatewayMonitor(async ({ c, dns, upstream }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await c.server.create(gateway('simple', [{ name: 'http', hostname: `simple.${ZONE}` }], [{ value: '192.0.2.20' }]));
    await c.server.create(dnsPolicy('simple', { gateway: 'simple' }));
    await until('both hosts', async () => (await has(dns, APP, 'A 192.0.2.10')()) && (await has(dns, `simple.${ZONE}`, 'A 192.0.2.20')()));
    upstream.resetCounts();
    const cname = await query(dns, APP, 'CNAME');
    assert.equal([cname.rcode, cname.answers.map((a) => a.replace(/^(\S+) \d+ /, '$1 '))], ['NOERROR', [`${APP} CNAME klb.${APP}`]]);
    const txt = await query(dns, APP, 'TXT');
    assert.is(txt.rcode, 'NOERROR');
    assert.is(txt.answers[0]?.replace(/^(\S+) \d+ /, '$1 '), `${APP} CNAME klb.${APP}`);
    for (const type of ['MX', 'TXT', 'SRV'] as const) {
      const reply = await query(dns, `simple.${ZONE}`, type);
      assert.equal([type, reply.rcode, reply.answers], [type, 'NOERROR', []]);
    }
    assert.is(upstream.queries(), 0, 'nothing was forwarded');
  });
});

test("names of a Gateway zone lbdns does not serve are the zone's to answer, never forwarded: NXDOMAIN, and NODATA for the apex and a name with names under it", async () => {
  await withGatewayMonitor(async ({ c, dns, upstream }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: `*.store.${ZONE}` }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('the wildcard host', has(dns, `x.store.${ZONE}`, 'A 192.0.2.10'));
    upstream.resetCounts();
    const none = await query(dns, `nope.${ZONE}`, 'A');
    assert.equal([none.rcode, none.answers, none.authority], ['NXDOMAIN', [], ['SOA']]);
    for (const [name, type] of [[`store.${ZONE}`, 'A'], [`store.${ZONE}`, 'AAAA'], [ZONE, 'A']] as const) {
      const reply = await query(dns, name, type);
      assert.equal([name, type, reply.rcode, reply.answers, reply.authority], [name, type, 'NOERROR', [], ['SOA']]);
    }
    const ns = await query(dns, ZONE, 'NS');
    assert.equal([ns.rcode, ns.answers], ['NOERROR', [`${ZONE} 30 NS ns.lbdns.invalid`]]);
    assert.is(upstream.queries(), 0, 'nothing was forwarded');
  });
});

test("a name not served yet (its load balancer's host name does not resolve) answers empty, not another owner's wildcard over it", async () => {
  await withGatewayMonitor(async ({ c, m, dns }) => {
    await c.server.create(kuadrantRecord('wild', `*.${ZONE}`, [{ dnsName: `*.${ZONE}`, recordType: 'A', targets: ['192.0.2.9'] }], { namespace: 'other' }));
    await c.server.create(kuadrantRecord('new', APP, [{ dnsName: APP, recordType: 'CNAME', targets: ['new.elb.example.org'] }]));
    await until('the wildcard', has(dns, `any.${ZONE}`, 'A 192.0.2.9'));
    await until('the new name reported not served', () => m.logs().some((l) => JSON.stringify(l).includes(`${APP}`) && JSON.stringify(l).includes('no address yet')), 8000);
    for (const type of ['A', 'AAAA'] as const) {
      const reply = await query(dns, APP, type);
      assert.equal([type, reply.rcode, reply.answers, reply.authority], [type, 'NOERROR', [], ['SOA']]);
    }
    const under = await query(dns, `x.${APP}`, 'A');
    assert.equal([under.rcode, under.answers], ['NXDOMAIN', []]);
  });
});

test("a node whose name lies in a Gateway zone is answered there with its addresses, and a tenant's listener cannot take that name", async () => {
  await withGatewayMonitor(async ({ c, m, dns, upstream }) => {
    const w0 = `w0.${ZONE}`;
    await c.server.create(node(w0, ['10.0.0.9']));
    await c.server.create(gateway('gw', [{ name: 'http', hostname: w0 }], [{ value: '203.0.113.66' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the node in its zone', has(dns, w0, 'A 10.0.0.9'));
    await until('the listener refused', () => m.logs().some((l) => l.msg === 'gateway name refused; not served' && l.name === w0 && l.reason === 'cluster-name'));
    upstream.resetCounts();
    assert.equal(await served(dns, w0), ['A 10.0.0.9']);
    assert.is(upstream.queries(), 0, 'nothing was forwarded');
  });
});

test('a Hostname address is a CNAME that CoreDNS chases through its upstream', async () => {
  await withGatewayMonitor(async ({ c, dns, upstream }) => {
    upstream.set('lb-1.elb.example.org', { A: ['198.51.100.7'] });
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ type: 'Hostname', value: 'lb-1.elb.example.org' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the chased address', has(dns, APP, 'A 198.51.100.7'));
    assert.equal(await answerOf(dns, APP, 'A'), [`${APP} CNAME lb-1.elb.example.org`, 'lb-1.elb.example.org A 198.51.100.7']);
  });
});

/** Three Gateways of one namespace share app.zone: EU at weights 200 and 50 (EU the default geo), NA at 100. */
async function seedGeoAndWeights(c: ClusterFixture): Promise<void> {
  await c.server.create(gateway('eu-a', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.1' }]));
  await c.server.create(gateway('eu-b', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.2' }]));
  await c.server.create(gateway('na', [{ name: 'http', hostname: APP }], [{ value: '198.51.100.1' }]));
  await c.server.create(dnsPolicy('eu-a', { gateway: 'eu-a' }, { loadBalancing: { weight: 200, geo: 'GEO-EU', defaultGeo: true } }));
  await c.server.create(dnsPolicy('eu-b', { gateway: 'eu-b' }, { loadBalancing: { weight: 50, geo: 'GEO-EU', defaultGeo: true } }));
  await c.server.create(dnsPolicy('na', { gateway: 'na' }, { loadBalancing: { weight: 100, geo: 'GEO-NA', defaultGeo: false } }));
}

test('load-balanced with two geos and two weights: the default geo answers with both weighted targets, first address by weight', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await seedGeoAndWeights(c);
    await until('the EU addresses', async () => (await served(dns, APP)).length === 2);
    assert.equal(await served(dns, APP), ['A 192.0.2.1', 'A 192.0.2.2']);
    // loadbalance re-reads its weight file at the reload interval (2 s); the margin is for a loaded machine.
    await sleep(3500);
    const weights = await readFile(join(c.dir, 'Corefile.weights'), 'utf8');
    assert.match(weights, new RegExp(`\\ngeo-eu\\.klb\\.app\\.gw\\.example\\.net\\.\\n192\\.0\\.2\\.1 200\\n192\\.0\\.2\\.2 50\\n`));
    let first = 0;
    for (let i = 0; i < 100; i++) {
      const answer = await answerOf(dns, APP, 'A');
      assert.equal(answer.slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME geo-eu.klb.${APP}`]);
      if (answer[2] === `geo-eu.klb.${APP} A 192.0.2.1`) first++;
    }
    assert.ok(first > 65 && first < 95, `weight 200 of 250 came first ${first} times in 100`);
  });
});

/** Two Gateways of APP in one geo, load-balanced with these weights: 192.0.2.1 and 192.0.2.2. */
async function seedTwoWeights(c: ClusterFixture, a: number, b: number): Promise<void> {
  await c.server.create(gateway('eu-a', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.1' }]));
  await c.server.create(gateway('eu-b', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.2' }]));
  await c.server.create(dnsPolicy('eu-a', { gateway: 'eu-a' }, { loadBalancing: { weight: a, geo: 'GEO-EU', defaultGeo: true } }));
  await c.server.create(dnsPolicy('eu-b', { gateway: 'eu-b' }, { loadBalancing: { weight: b, geo: 'GEO-EU', defaultGeo: true } }));
}

test("a weighted target of weight 0 is drained: not answered while another target weighs more, as Kuadrant's plugin never picks it", async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await seedTwoWeights(c, 100, 0);
    await until('the EU address', async () => (await served(dns, APP)).length > 0);
    await sleep(500);
    assert.equal(await served(dns, APP), ['A 192.0.2.1']);
  });
});

test('a weighted set of address records drains its targets of weight 0 too', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    const weighted = (setIdentifier: string, ip: string, weight: string) => ({ dnsName: APP, recordType: 'A' as const, targets: [ip], setIdentifier, providerSpecific: [{ name: 'weight', value: weight }] });
    await c.server.create(kuadrantRecord('weighted', APP, [weighted('a', '192.0.2.1', '100'), weighted('b', '192.0.2.2', '0')]));
    await until('the address', async () => (await served(dns, APP)).length > 0);
    await sleep(500);
    assert.equal(await served(dns, APP), ['A 192.0.2.1']);
  });
});

test('a weighted set all of weight 0 answers every target, none preferred', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await seedTwoWeights(c, 0, 0);
    await until('both EU addresses', async () => (await served(dns, APP)).length === 2);
    assert.equal(await served(dns, APP), ['A 192.0.2.1', 'A 192.0.2.2']);
  });
});

test("a monitor restarted while a Gateway's Hostname address SERVFAILs keeps the host's CNAME in the zone file, as served before", async () => {
  await withGatewayMonitor(async ({ c, upstream, restart }) => {
    upstream.set('lb-1.elb.example.org', { A: ['198.51.100.7'], ttl: 1 });
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ type: 'Hostname', value: 'lb-1.elb.example.org' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    const zoneFile = join(c.dir, `${ZONE}.zone`);
    const line = `${APP}. 60 IN CNAME lb-1.elb.example.org.`;
    await until('the CNAME in the zone file', async () => (await readFile(zoneFile, 'utf8').catch(() => '')).includes(line));
    upstream.fail('lb-1.elb.example.org', 'servfail');
    const again = await restart();
    await until('the held name logged', () => again.logs().some((l) => l.msg === 'serving a name with its previous addresses' && l.name === APP));
    await sleep(500);
    assert.ok((await readFile(zoneFile, 'utf8')).includes(line), 'the CNAME is still served');
  });
});

test('--geo-code picks that geo of a load-balanced name', async () => {
  await withGatewayMonitor(
    async ({ c, dns }) => {
      await seedGeoAndWeights(c);
      await until('the NA address', has(dns, APP, 'A 198.51.100.1'));
      assert.equal(await served(dns, APP), ['A 198.51.100.1']);
      assert.equal((await answerOf(dns, APP, 'A')).slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME geo-na.klb.${APP}`]);
    },
    { geoCode: 'GEO-NA' },
  );
});

test('--geo-code with a country and its continent (FR,GEO-EU) answers the continent where no record names the country, as Kuadrant matches both', async () => {
  await withGatewayMonitor(
    async ({ c, dns }) => {
      await seedGeoAndWeights(c);
      await c.server.create(gateway('us', [{ name: 'http', hostname: APP }], [{ value: '203.0.113.9' }]));
      await c.server.create(dnsPolicy('us', { gateway: 'us' }, { loadBalancing: { weight: 100, geo: 'US', defaultGeo: false } }));
      await until('the EU addresses', async () => (await served(dns, APP)).length === 2);
      assert.equal((await answerOf(dns, APP, 'A')).slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME geo-eu.klb.${APP}`]);
    },
    { geoCode: 'FR,GEO-EU' },
  );
});

test('--geo-code answers its first geo that a record names: the country before the continent', async () => {
  await withGatewayMonitor(
    async ({ c, dns }) => {
      await seedGeoAndWeights(c);
      await c.server.create(gateway('fr', [{ name: 'http', hostname: APP }], [{ value: '203.0.113.7' }]));
      await c.server.create(dnsPolicy('fr', { gateway: 'fr' }, { loadBalancing: { weight: 100, geo: 'FR', defaultGeo: false } }));
      await until('the FR address', has(dns, APP, 'A 203.0.113.7'));
      assert.equal(await served(dns, APP), ['A 203.0.113.7']);
    },
    { geoCode: 'FR,GEO-EU' },
  );
});

test('geo codes are taken as Kuadrant takes them (Eu-West, CAD), and --geo-code matches them in any case', async () => {
  await withGatewayMonitor(
    async ({ c, dns }) => {
      await c.server.create(gateway('eu', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.1' }]));
      await c.server.create(gateway('ca', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.2' }]));
      await c.server.create(dnsPolicy('eu', { gateway: 'eu' }, { loadBalancing: { weight: 100, geo: 'Eu-West', defaultGeo: false } }));
      await c.server.create(dnsPolicy('ca', { gateway: 'ca' }, { loadBalancing: { weight: 100, geo: 'CAD', defaultGeo: true } }));
      await until('the eu-west address', has(dns, APP, 'A 192.0.2.1'));
      assert.equal((await answerOf(dns, APP, 'A')).slice(0, 2), [`${APP} CNAME klb.${APP}`, `klb.${APP} CNAME eu-west.klb.${APP}`]);
      assert.equal(await served(dns, APP), ['A 192.0.2.1']);
    },
    { geoCode: 'EU-WEST' },
  );
});

test('a load-balanced Gateway with an IP and a Hostname address answers with the addresses of both', async () => {
  await withGatewayMonitor(async ({ c, dns, upstream }) => {
    upstream.set('lb-1.elb.example.org', { A: ['198.51.100.7'] });
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }, { type: 'Hostname', value: 'lb-1.elb.example.org' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }, LB));
    await until('both addresses', async () => (await served(dns, APP)).length === 2);
    assert.equal(await served(dns, APP), ['A 192.0.2.10', 'A 198.51.100.7']);
  });
});

test('a load-balanced host with no record for this geo and no default geo is not served, and display says exactly why', async () => {
  const cluster = await startGatewayCluster();
  try {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-NA', defaultGeo: false } }));
    const r = await runLbdns(['display', cluster.kubeconfig, '--gateway-zone', ZONE, '--geo-code', 'GEO-EU', '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const notServed = (JSON.parse(r.stdout) as { notServed: { name: string; reason: string }[] }).notServed;
    assert.equal(notServed.find((n) => n.name === APP), { name: APP, reason: `klb.${APP} has neither geo GEO-EU nor a default geo (*)` });
  } finally {
    await cluster.close();
  }
});

test('a CNAME loop in a Kuadrant DNSRecord is not served, and display names it as a loop, with its names', async () => {
  const cluster = await startGatewayCluster();
  try {
    const [a, b] = [`a.${ZONE}`, `b.${ZONE}`];
    await cluster.server.create(kuadrantRecord('loop', a, [{ dnsName: a, recordType: 'CNAME', targets: [b] }, { dnsName: b, recordType: 'CNAME', targets: [a] }]));
    const r = await runLbdns(['display', cluster.kubeconfig, '--gateway-zone', ZONE, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const notServed = (JSON.parse(r.stdout) as { notServed: { name: string; reason: string }[] }).notServed.filter((n) => n.name.endsWith(ZONE));
    assert.equal(notServed, [
      { name: a, reason: `is in a CNAME loop: ${a} → ${b} → ${a}` },
      { name: b, reason: `is in a CNAME loop: ${a} → ${b} → ${a}` },
    ]);
  } finally {
    await cluster.close();
  }
});

test('a Kuadrant DNSRecord CNAME with several targets serves its first, as Kuadrant\'s CoreDNS plugin does, with a warning', async () => {
  await withGatewayMonitor(async ({ c, m, dns, upstream }) => {
    upstream.set('a.elb.example.org', { A: ['198.51.100.1'] });
    upstream.set('b.elb.example.org', { A: ['198.51.100.2'] });
    await c.server.create(kuadrantRecord('two', APP, [{ dnsName: APP, recordType: 'CNAME', targets: ['a.elb.example.org', 'b.elb.example.org'] }]));
    await until('the first target', has(dns, APP, 'A 198.51.100.1'));
    assert.equal(await answerOf(dns, APP, 'A'), [`${APP} CNAME a.elb.example.org`, 'a.elb.example.org A 198.51.100.1']);
    assert.ok(m.logs().some((l) => /a CNAME holds one target: serving the first \(a\.elb\.example\.org\) of 2/.test(String(l.msg))), 'warned');
  });
});

test('a Kuadrant DNSRecord labelled with a gateway zone is served, one without the label is not', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(kuadrantRecord('kuadrant', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.5'] }, { dnsName: `www.${ZONE}`, recordType: 'CNAME', targets: [APP] }]));
    const unlabelled = kuadrantRecord('other', `other.${ZONE}`, [{ dnsName: `other.${ZONE}`, recordType: 'A', targets: ['203.0.113.6'] }]);
    await c.server.create({ ...unlabelled, metadata: { name: 'other', namespace: NS } });
    await until('the record', has(dns, APP, 'A 203.0.113.5'));
    await until('the CNAME', has(dns, `www.${ZONE}`, 'A 203.0.113.5'));
    assert.equal(await answerOf(dns, `www.${ZONE}`, 'A'), [`www.${ZONE} CNAME ${APP}`, `${APP} A 203.0.113.5`]);
    assert.equal(await served(dns, `other.${ZONE}`), []);
  });
});

test('names outside the zones, under api-int and claimed by an older owner are refused, logged once and counted', async () => {
  await withGatewayMonitor(async ({ c, m, dns }) => {
    await c.server.create(kuadrantRecord('first', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.5'] }]));
    await until('the first owner', has(dns, APP, 'A 203.0.113.5'));
    await sleep(1100);
    await c.server.create(kuadrantRecord('thief', APP, [{ dnsName: APP, recordType: 'A', targets: ['203.0.113.66'] }], { namespace: 'tenant' }));
    await c.server.create(kuadrantRecord('wide', 'www.example.org', [{ dnsName: 'www.example.org', recordType: 'A', targets: ['203.0.113.7'] }]));
    await c.server.create(gateway('gw', [{ name: 'http', hostname: `x.api-int.${DOMAIN}` }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await c.server.create(gateway('gw2', [{ name: 'http', hostname: `late.${ZONE}` }], [{ value: '192.0.2.12' }]));
    await c.server.create(dnsPolicy('dns2', { gateway: 'gw2' }));
    await until('a later change served', has(dns, `late.${ZONE}`, 'A 192.0.2.12'));
    // The Kuadrant DNSRecords come on a watch of their own, in no order with the Gateways'.
    const refusals = () => m.logs().filter((l) => l.msg === 'gateway name refused; not served');
    await until('three refusals', () => refusals().length >= 3);
    const reasons = refusals().map((l) => `${String(l.name)} ${String(l.reason)}`).sort();
    assert.equal(reasons, [`${APP} other-owner`, 'www.example.org outside-zones', `x.api-int.${DOMAIN} outside-zones`]);
    assert.equal(await served(dns, APP), ['A 203.0.113.5']);
    const expected = [
      /lbdns_names_refused_total\{source="dnsrecord.kuadrant.io",reason="other-owner"\} 1/,
      /lbdns_names_refused_total\{source="dnsrecord.kuadrant.io",reason="outside-zones"\} 1/,
      // The zone files' addresses apart from the Corefile's; set after the Corefile's write, which CoreDNS's zone reload need not wait for.
      /^lbdns_records_served\{kind="gateway"\} 2$/m,
    ];
    let metrics = '';
    await until('the metrics of that computation', async () => {
      metrics = await (await fetch(`http://${m.health}/metrics`)).text();
      return expected.every((e) => e.test(metrics));
    }).catch(() => undefined);
    for (const e of expected) assert.match(metrics, e);
  });
});

test('a gateway zone that holds the cluster domain is refused before anything is written', async () => {
  const cluster = await startGatewayCluster();
  try {
    const monitor = await startMonitor(cluster, { flags: { gatewayZones: ['example.com'], upstreams: ['10.0.0.2'] } });
    const error = await monitor.exited.then(String, (err: Error) => err);
    assert.instance(error, ValidationError);
    assert.match((error as Error).message, /--gateway-zone: "example\.com" is or contains the cluster domain/);
    assert.is(await stat(cluster.out).then(() => 'written', () => 'absent'), 'absent');
  } finally {
    await cluster.close();
  }
});

test('a deleted DNSPolicy takes its names with it', async () => {
  await withGatewayMonitor(async ({ c, dns }) => {
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the name', has(dns, APP, 'A 192.0.2.10'));
    await c.server.delete({ resource: 'dnspolicies', namespace: NS, name: 'dns' });
    await until('the name gone', gone(dns, APP));
  });
});

/** Record lines of a zone printout: "NAME TTL IN TYPE RDATA". */
const recordLines = (zone: string): string[] => zone.split('\n').filter((l) => l !== '' && !l.startsWith(';') && !l.startsWith('$')).map((l) => l.trim().split(/\s+/).join(' '));

test('print-records --names gateway prints what lbdns serves for Gateway names: a chain for a load-balanced one, addresses for a simple one', async () => {
  const cluster = await startGatewayCluster();
  try {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    await cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.20' }]));
    await cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--gateway-zone', ZONE, '--names', 'gateway', '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const lines = recordLines(r.stdout);
    const klb = `klb.${APP}`;
    const leaf = await leafName(cluster, klb);
    assert.equal(lines.sort(), [`${leaf}. 60 IN A 192.0.2.10`, `${APP}. 300 IN CNAME ${klb}.`, `geo-eu.${klb}. 60 IN CNAME ${leaf}.`, `${klb}. 300 IN CNAME geo-eu.${klb}.`, `shop.${ZONE}. 60 IN A 192.0.2.20`].sort(), 'each record of the chain, once');
    assert.match(r.stdout, new RegExp(`; ${APP.replaceAll('.', '\\.')}: Gateway DNS dnspolicy/${NS}/dns`));
  } finally {
    await cluster.close();
  }
});

test('print-records --format nsupdate clears every name of a load-balanced chain before adding its records, so no old address stays at its last name', async () => {
  const cluster = await startGatewayCluster();
  try {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }]));
    await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--gateway-zone', ZONE, '--names', 'gateway', '--format', 'nsupdate', '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const klb = `klb.${APP}`;
    const leaf = await leafName(cluster, klb);
    const updates = r.stdout.split('\n').filter((l) => l.startsWith('update '));
    const names = [APP, klb, `geo-eu.${klb}`, leaf];
    const deletes = updates.filter((l) => l.startsWith('update delete '));
    assert.equal(deletes.sort(), names.flatMap((n) => ['A', 'AAAA', 'CNAME'].map((t) => `update delete ${n}. ${t}`)).sort(), 'each name cleared, once');
    const adds = updates.filter((l) => l.startsWith('update add '));
    assert.equal(adds.sort(), [`update add ${APP}. 300 CNAME ${klb}.`, `update add ${klb}. 300 CNAME geo-eu.${klb}.`, `update add geo-eu.${klb}. 60 CNAME ${leaf}.`, `update add ${leaf}. 60 A 192.0.2.10`].sort());
    for (const name of names) {
      const firstAdd = updates.findIndex((l) => l.startsWith(`update add ${name}. `));
      assert.ok(updates.findIndex((l) => l.startsWith(`update delete ${name}. `)) < firstAdd, `${name} cleared before its records are added`);
    }
  } finally {
    await cluster.close();
  }
});

test("check-dns --names gateway checks the admin's DNS for each Gateway name lbdns serves", async () => {
  const cluster = await startGatewayCluster();
  const admin = await startDnsServer();
  try {
    await cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.20' }]));
    await cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
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

test("check-dns --names gateway: a chain that reaches the Gateway's load balancer host name is ok, whichever of its addresses the cloud's DNS gives there", async () => {
  const cluster = await startGatewayCluster();
  const admin = await startDnsServer();
  const cloud = await startDnsServer();
  try {
    cloud.set('lb-1.elb.example.org', { A: ['198.51.100.7', '198.51.100.8'] });
    await cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ type: 'Hostname', value: 'lb-1.elb.example.org' }]));
    await cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
    // What print-records gives the admin: the CNAME; the load balancer's name answers as its cloud will.
    admin.set(`shop.${ZONE}`, { CNAME: 'lb-1.elb.example.org' });
    admin.set('lb-1.elb.example.org', { A: ['198.51.100.8'] });
    const r = await runLbdns(['check-dns', cluster.kubeconfig, '--gateway-zone', ZONE, '--names', 'gateway', '--server', admin.address, '--dns-server', cloud.address, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--output', 'json']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { checks: { name: string; verdict: string }[] }).checks.map((x) => [x.name, x.verdict]), [[`shop.${ZONE}`, 'ok']]);
  } finally {
    await cloud.close();
    await admin.close();
    await cluster.close();
  }
});

test("display --gateway-zone prints each DNSPolicy's endpoints as a Kuadrant DNSRecord holds them, with the policy and what lbdns serves differently", async () => {
  const cluster = await startGatewayCluster();
  try {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.10' }, { type: 'Hostname', value: 'lb.example.org' }]));
    await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 120, geo: 'GEO-EU', defaultGeo: true } }));
    await cluster.server.create(gateway('shop', [{ name: 'http', hostname: `shop.${ZONE}` }], [{ value: '192.0.2.20' }, { value: 'fd00::20' }]));
    await cluster.server.create(dnsPolicy('shop', { gateway: 'shop' }));
    const r = await runLbdns(['display', cluster.kubeconfig, '--gateway-zone', ZONE, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const klb = `klb.${APP}`;
    const leaf = await leafName(cluster, klb);
    const source = `dnspolicy/${NS}/dns`;
    // Each policy's endpoints sorted by name and set identifier, as Kuadrant's builder sorts them (the leaf's name starts with the cluster's short code).
    const byKey = (a: { dnsName: string; setIdentifier?: string }, b: { dnsName: string; setIdentifier?: string }) => (a.dnsName + (a.setIdentifier ?? '') < b.dnsName + (b.setIdentifier ?? '') ? -1 : 1);
    const lb = [
      { dnsName: leaf, recordType: 'A', targets: ['192.0.2.10'], recordTTL: 60, source },
      { dnsName: APP, recordType: 'CNAME', targets: [klb], recordTTL: 300, source },
      { dnsName: `geo-eu.${klb}`, recordType: 'CNAME', targets: [leaf], recordTTL: 60, setIdentifier: leaf, providerSpecific: [{ name: 'weight', value: '120' }], source },
      { dnsName: `geo-eu.${klb}`, recordType: 'CNAME', targets: ['lb.example.org'], recordTTL: 60, setIdentifier: 'lb.example.org', providerSpecific: [{ name: 'weight', value: '120' }], source },
      { dnsName: klb, recordType: 'CNAME', targets: [`geo-eu.${klb}`], recordTTL: 300, setIdentifier: 'GEO-EU', providerSpecific: [{ name: 'geo-code', value: 'GEO-EU' }], source },
      { dnsName: klb, recordType: 'CNAME', targets: [`geo-eu.${klb}`], recordTTL: 300, setIdentifier: 'default', providerSpecific: [{ name: 'geo-code', value: '*' }], source },
    ].sort(byKey);
    assert.equal((JSON.parse(r.stdout) as { gateway: { endpoints: unknown[] } }).gateway.endpoints, [
      ...lb,
      { dnsName: `shop.${ZONE}`, recordType: 'A', targets: ['192.0.2.20', 'fd00::20'], recordTTL: 60, source: `dnspolicy/${NS}/shop`, served: 'IPv6 addresses in an A record: serving fd00::20 as AAAA' },
    ]);
  } finally {
    await cluster.close();
  }
});

test("a tenant's CNAME target that never answers holds nothing back: another Gateway's name is served within its usual time", async () => {
  await withGatewayMonitor(async ({ c, upstream }) => {
    upstream.fail('blackhole.example.org', 'timeout');
    const zoneFile = join(c.dir, `${ZONE}.zone`);
    const stalled = `stalled.${ZONE}`;
    await c.server.create(kuadrantRecord('stalled', stalled, [{ dnsName: stalled, recordType: 'CNAME', targets: ['blackhole.example.org'] }]));
    await sleep(300);
    const started = Date.now();
    await c.server.create(gateway('gw', [{ name: 'http', hostname: APP }], [{ value: '192.0.2.1' }]));
    await c.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    await until('the Gateway name in the zone file', async () => (await readFile(zoneFile, 'utf8').catch(() => '')).includes(`${APP}. 60 IN A 192.0.2.1`), 3000);
    assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
  });
});

test.run();
