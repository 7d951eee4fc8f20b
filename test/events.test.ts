/**
 * Kubernetes Events: what an admin must act on reaches `oc get events` on the lbdns pod,
 * counted rather than repeated, and capped when many distinct problems come at once.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadKubeConfig } from '../lib/kube/client.js';
import { createLogger } from '../lib/runtime/log.js';
import { EVENT_REASONS, kubeEventSink, podFromEnv, type InvolvedObject } from '../lib/runtime/events.js';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { dirname, join } from 'node:path';
import { captured, dnsRecord, DNSRECORD_NS, DOMAIN, startCluster, startMonitor, until, type ClusterFixture } from './support/cluster-fixture.js';
import { dnsPolicy, gateway, kuadrantRecord, NS, startGatewayCluster, ZONE } from './support/gateway-fixture.js';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'openshift-lbdns', name: 'lbdns-coredns-master-0' } satisfies InvolvedObject;

interface CoreEvent {
  metadata: { name: string; namespace: string };
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
}

const eventsOf = async (c: ClusterFixture): Promise<CoreEvent[]> => (await c.server.list('events', POD.namespace)) as unknown as CoreEvent[];
/** The Event writes the audit log recorded: `create` is a POST, `patch` a PATCH. */
const eventRequests = async (c: ClusterFixture, verb: 'create' | 'patch') => (await c.server.requests()).filter((r) => r.verb === verb && r.resource === 'events');

async function withSink(
  opts: { repeatIntervalMs?: number; burst?: number; refillMs?: number },
  body: (c: ClusterFixture, sink: ReturnType<typeof kubeEventSink>, log: () => string) => Promise<void>,
  seed: Parameters<typeof startCluster>[0] = {},
): Promise<void> {
  const cluster = await startCluster(seed);
  const stderr = captured();
  try {
    await cluster.server.ensureNamespace(POD.namespace);
    const kc = await loadKubeConfig({ path: cluster.kubeconfig, env: {} });
    const sink = kubeEventSink({ kc, pod: POD, log: createLogger(stderr.stream, 'debug'), host: 'master-0', ...opts });
    await body(cluster, sink, stderr.text);
    await sink.close();
  } finally {
    await cluster.close();
  }
}

test('an event becomes one core v1 Event on the lbdns pod, with reason, type, count 1 and the node as source', async () => {
  await withSink({}, async (c, sink) => {
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.hostUnresolvable, message: 'LB host name lb.example.net does not resolve (NXDOMAIN); serving its last known good addresses' });
    await until('the Event', async () => (await eventsOf(c)).length === 1);
    const [event] = (await eventsOf(c));
    assert.equal(event?.involvedObject, POD);
    assert.is(event?.reason, 'LBHostUnresolvable');
    assert.is(event?.type, 'Warning');
    assert.is(event?.count, 1);
    assert.equal(event?.source, { component: 'lbdns', host: 'master-0' });
    assert.match(event?.metadata.name ?? '', /^lbdns-coredns-master-0\.[0-9a-f]+$/);
  });
});

test('the same event repeated 200 times is one Event with count 200, written by one create and at most 2 patches', async () => {
  await withSink({ repeatIntervalMs: 300 }, async (c, sink) => {
    for (let i = 0; i < 100; i++) sink.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: 'watching nodes failed' });
    await until('the first count reaches the API', async () => (await eventsOf(c))[0]?.count === 100);
    for (let i = 0; i < 100; i++) sink.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: 'watching nodes failed' });
    await sink.close();
    assert.is((await eventsOf(c)).length, 1);
    assert.is((await eventsOf(c))[0]?.count, 200);
    assert.is((await eventRequests(c, 'create')).length, 1);
    assert.ok((await eventRequests(c, 'patch')).length <= 2, `${(await eventRequests(c, 'patch')).length} patches`);
  });
});

test('repeats within the repeat interval are held back and sent by close()', async () => {
  await withSink({ repeatIntervalMs: 60_000 }, async (c, sink) => {
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.nameRefused, message: 'dnsrecord x: refused' });
    await until('the Event', async () => (await eventsOf(c)).length === 1);
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.nameRefused, message: 'dnsrecord x: refused' });
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.nameRefused, message: 'dnsrecord x: refused' });
    assert.is((await eventRequests(c, 'patch')).length, 0);
    await sink.close();
    assert.is((await eventsOf(c))[0]?.count, 3);
  });
});

test('distinct events beyond the burst are dropped, not queued: 40 distinct problems make 5 Events', async () => {
  await withSink({ burst: 5, refillMs: 3_600_000 }, async (c, sink) => {
    for (let i = 0; i < 40; i++) sink.emit({ type: 'Warning', reason: EVENT_REASONS.nameRefused, message: `name ${i} refused` });
    await sink.close();
    assert.is((await eventsOf(c)).length, 5);
    assert.equal((await eventsOf(c)).map((e) => e.message).sort(), ['name 0 refused', 'name 1 refused', 'name 2 refused', 'name 3 refused', 'name 4 refused']);
  });
});

test('an Event that expired meanwhile is written again as a new Event carrying the count', async () => {
  await withSink({ repeatIntervalMs: 0 }, async (c, sink) => {
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: 'watch failed' });
    await until('the Event', async () => (await eventsOf(c)).length === 1);
    await c.server.delete({ resource: 'events', namespace: POD.namespace, name: (await eventsOf(c))[0]!.metadata.name });
    sink.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: 'watch failed' });
    await until('the new Event', async () => (await eventsOf(c)).length === 1);
    await sink.close();
    assert.is((await eventsOf(c))[0]?.count, 2);
  });
});

test('an API server refusing Events is logged once, and lbdns goes on', async () => {
  // lbdns's identity holds no right to create Events: the real RBAC authorizer answers 403.
  await withSink({}, async (c, sink, log) => {
    for (let i = 0; i < 3; i++) {
      sink.emit({ type: 'Warning', reason: EVENT_REASONS.watchFailed, message: 'watch failed' });
      await until('the attempt', async () => (await eventRequests(c, 'create')).length === i + 1);
    }
    await sink.close();
    const failures = log().split('\n').filter((l) => l.includes('writing an Event failed'));
    assert.is(failures.length, 1, log());
    assert.match(failures[0] ?? '', /forbidden/);
    assert.equal((await eventRequests(c, 'create')).map((r) => r.status), [403, 403, 403]);
  }, { rules: [] });
});

test('the pod comes from POD_NAME and POD_NAMESPACE; without them there is no pod to report on', () => {
  assert.equal(podFromEnv({ POD_NAME: 'p', POD_NAMESPACE: 'ns' }), { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' });
  assert.is(podFromEnv({ POD_NAME: 'p' }), undefined);
});

/** A monitor in the lbdns pod, as the downward API names it, on `cluster`; closes the cluster after. */
async function asPod(cluster: ClusterFixture, body: () => Promise<void>): Promise<void> {
  const saved = { POD_NAME: process.env.POD_NAME, POD_NAMESPACE: process.env.POD_NAMESPACE };
  Object.assign(process.env, { POD_NAME: POD.name, POD_NAMESPACE: POD.namespace });
  try {
    await cluster.server.ensureNamespace(POD.namespace);
    await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await cluster.close();
  }
}

test('the monitor reports a DNSRecord name outside the cluster domain as a NameRefused Event on its pod', async () => {
  const cluster = await startCluster();
  await asPod(cluster, async () => {
    await cluster.server.create(dnsRecord('hijack', { dnsName: 'www.bank.example.', targets: ['10.0.9.9'] }));
    const monitor = await startMonitor(cluster);
    try {
      await until('the Event', async () => (await eventsOf(cluster)).some((e) => e.reason === 'NameRefused'), 8000);
    } finally {
      assert.is(await monitor.stop(), 0);
    }
    const event = (await eventsOf(cluster)).find((e) => e.reason === 'NameRefused');
    assert.equal(event?.involvedObject, POD);
    assert.match(event?.message ?? '', new RegExp(`dnsrecord ${DNSRECORD_NS}/hijack spec\\.dnsName: "www\\.bank\\.example\\." is outside the cluster domain`));
  });
});

test("a DNSRecord for the cluster domain's apex is counted as outside-domain, one for api-int as api-name", async () => {
  const cluster = await startCluster();
  const monitor = await startMonitor(cluster);
  try {
    await cluster.server.create(dnsRecord('apex', { dnsName: `${DOMAIN}.`, targets: ['10.0.9.9'] }));
    await cluster.server.create(dnsRecord('api-int', { dnsName: `api-int.${DOMAIN}.`, targets: ['10.0.9.9'] }));
    const expected = [/^lbdns_names_refused_total\{source="dnsrecords",reason="outside-domain"\} 1$/m, /^lbdns_names_refused_total\{source="dnsrecords",reason="api-name"\} 1$/m];
    let text = '';
    await until('both refusals counted', async () => {
      text = await (await fetch(`http://${monitor.health}/metrics`)).text();
      return expected.every((e) => e.test(text));
    }, 8000).catch(() => undefined);
    for (const e of expected) assert.match(text, e);
    assert.match(text, /^lbdns_names_refused_total\{source="dnsrecords",reason="invalid"\} 0$/m);
  } finally {
    await monitor.stop();
    await cluster.close();
  }
});

test('a DNSPolicy whose excludeAddresses holds a CIDR that does not parse is not applied, with an Event on the policy in its namespace', async () => {
  const cluster = await startGatewayCluster();
  await asPod(cluster, async () => {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }], [{ value: '192.0.2.10' }]));
    const policy = await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }, { excludeAddresses: ['10.0.0.0/33'] }));
    await cluster.server.create(gateway('ok', [{ name: 'http', hostname: `ok.${ZONE}` }], [{ value: '192.0.2.20' }]));
    await cluster.server.create(dnsPolicy('ok', { gateway: 'ok' }, { excludeAddresses: ['10.0.0.0/8'] }));
    const zoneFile = join(dirname(cluster.out), `${ZONE}.zone`);
    const monitor = await startMonitor(cluster, { flags: { gatewayZones: [ZONE] } });
    const policyEvents = async () => ((await cluster.server.list('events', NS)) as unknown as CoreEvent[]).filter((e) => e.involvedObject.kind === 'DNSPolicy');
    try {
      await until('the Event', async () => (await policyEvents()).length > 0, 8000);
      await until('the valid policy served', async () => (await readFile(zoneFile, 'utf8').catch(() => '')).includes(`ok.${ZONE}`));
    } finally {
      assert.is(await monitor.stop(), 0);
    }
    const [event] = await policyEvents();
    assert.equal(event?.involvedObject, { apiVersion: 'kuadrant.io/v1', kind: 'DNSPolicy', namespace: NS, name: 'dns', uid: (policy as { metadata: { uid: string } }).metadata.uid });
    assert.is(event?.reason, 'SourceDataIgnored');
    assert.match(event?.message ?? '', /spec\.excludeAddresses\[0\]: "10\.0\.0\.0\/33" is not a CIDR; policy not applied/);
    assert.not.match(await readFile(zoneFile, 'utf8'), `app.${ZONE}`);
  });
});

test('a DNSPolicy whose listener host it may not claim gets a NameRefused Event on the policy, which kubectl describe finds by its uid', async () => {
  const cluster = await startGatewayCluster();
  await asPod(cluster, async () => {
    await cluster.server.create(gateway('gw', [{ name: 'http', hostname: 'app.bank.example' }], [{ value: '192.0.2.10' }]));
    const policy = await cluster.server.create(dnsPolicy('dns', { gateway: 'gw' }));
    const monitor = await startMonitor(cluster, { flags: { gatewayZones: [ZONE] } });
    const refusals = async () => ((await cluster.server.list('events', NS)) as unknown as CoreEvent[]).filter((e) => e.reason === 'NameRefused');
    try {
      await until('the Event', async () => (await refusals()).length > 0, 8000);
    } finally {
      assert.is(await monitor.stop(), 0);
    }
    const [event] = await refusals();
    assert.equal(event?.involvedObject, { apiVersion: 'kuadrant.io/v1', kind: 'DNSPolicy', namespace: NS, name: 'dns', uid: (policy as { metadata: { uid: string } }).metadata.uid });
    assert.is(event?.type, 'Warning');
    assert.match(event?.message ?? '', /app\.bank\.example is in none of the gateway zones .*; not served \(outside-zones\)$/);
  });
});

test('a Kuadrant DNSRecord with a name that is no DNS name gets its NameRefused Event on the record itself, in its namespace', async () => {
  const cluster = await startGatewayCluster();
  await asPod(cluster, async () => {
    const record = await cluster.server.create(kuadrantRecord('bad', `app.${ZONE}`, [{ dnsName: `bad name.${ZONE}`, recordType: 'A', targets: ['192.0.2.1'] }]));
    const monitor = await startMonitor(cluster, { flags: { gatewayZones: [ZONE] } });
    const onRecord = async () => ((await cluster.server.list('events', NS)) as unknown as CoreEvent[]).filter((e) => e.involvedObject.kind === 'DNSRecord');
    try {
      await until('the Event', async () => (await onRecord()).length > 0, 8000);
    } finally {
      assert.is(await monitor.stop(), 0);
    }
    const [event] = await onRecord();
    assert.equal(event?.involvedObject, { apiVersion: 'kuadrant.io/v1alpha1', kind: 'DNSRecord', namespace: NS, name: 'bad', uid: (record as { metadata: { uid: string } }).metadata.uid });
    assert.is(event?.reason, 'NameRefused');
  });
});

test('close() gives up on Events an API server never answers after closeWithinMs, so shutdown stays inside the grace period', async () => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const stderr = captured();
  try {
    const kc = new KubeConfig();
    const { port } = silent.address() as AddressInfo;
    kc.loadFromOptions({ clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 'x' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const sink = kubeEventSink({ kc, pod: POD, log: createLogger(stderr.stream, 'debug'), closeWithinMs: 300 });
    sink.emit({ type: 'Warning', reason: 'WatchFailed', message: 'watching nodes failed' });
    await until('the request reached the server', async () => sockets.length > 0);
    const started = Date.now();
    await sink.close();
    assert.ok(Date.now() - started < 2000, `close() took ${Date.now() - started} ms`);
    assert.match(stderr.text(), /Events still being sent at shutdown were left unsent/);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test.run();
