/**
 * The on-prem api-int migration, verified first: an address asked for api-int is served only
 * once a kube-apiserver is proven to answer there — TLS with the cluster CA for
 * api-int.<domain>, then /readyz — and going back to the VIP is checked the same way.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:https';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import { ApiIntGate } from '../lib/runtime/api-int-gate.js';
import { createLogger } from '../lib/runtime/log.js';
import { probeApiServer, type ApiProbeError } from '../lib/sinks/api-int-probe.js';
import type { Endpoint } from '../lib/model.js';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { dump as toYaml, load as parseYaml } from 'js-yaml';
import { readAnswers, startMonitor, until } from './support/cluster-fixture.js';
import { runLbdns } from './support/run-cli.js';
import { API_VIP, DOMAIN, HNS, hostedNetServices, INGRESS_VIP, withOnPrem } from './support/on-prem-fixture.js';
import { testCa, type TestCa } from './support/tls.js';

const API_INT = 'api-int.c1.example.com';
const API_INT_ONPREM = `api-int.${DOMAIN}`;
const VIPS: readonly Endpoint[] = [{ kind: 'ip', ip: '127.0.0.3' }];
const quiet = createLogger({ write: () => true });

let ca: TestCa;
let otherCa: TestCa;
const servers: Server[] = [];

test.before(async () => {
  [ca, otherCa] = await Promise.all([testCa(), testCa()]);
});

test.after(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all([ca.close(), otherCa.close()]);
});

/** An HTTPS server on 127.0.0.1 answering /readyz with `status`, with a certificate for `name` from `issuer`. */
async function apiServer(status: number, name = API_INT, issuer: TestCa = ca): Promise<number> {
  const { key, cert } = await issuer.issue(name);
  const server = createServer({ key, cert }, (req, res) => {
    res.writeHead(req.url === '/readyz' ? status : 404).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

const probe = (port: number, ip = '127.0.0.1') => probeApiServer({ ip, port, serverName: API_INT, ca: ca.cert, timeoutMs: 2000 });
const reasonOf = (p: Promise<void>) => p.then(() => 'passed', (e: ApiProbeError) => e.reason);

test('a kube-apiserver with a certificate for api-int from the cluster CA, answering /readyz 200, passes', async () => {
  assert.is(await reasonOf(probe(await apiServer(200))), 'passed');
});

test('an API server that asks for credentials (401) passes: it is there', async () => {
  assert.is(await reasonOf(probe(await apiServer(401))), 'passed');
});

test('a certificate for another name fails the check as tls', async () => {
  assert.is(await reasonOf(probe(await apiServer(200, 'api.c1.example.com'))), 'tls');
});

test('a certificate from another CA fails the check as tls', async () => {
  assert.is(await reasonOf(probe(await apiServer(200, API_INT, otherCa))), 'tls');
});

test('nothing listening fails the check as unreachable', async () => {
  const port = await apiServer(200);
  assert.is(await reasonOf(probe(port, '127.0.0.2')), 'unreachable');
});

test('a server answering 500 is no API server: http-status', async () => {
  assert.is(await reasonOf(probe(await apiServer(500))), 'http-status');
});

function gate(port: number) {
  const failures: string[] = [];
  let switches = 0;
  const g = new ApiIntGate({ probe: (ip) => probe(port, ip), log: quiet, onSwitch: () => switches++, onFailure: (r) => failures.push(r), retry: { minMs: 50, maxMs: 100 } });
  return { gate: g, failures, switches: () => switches };
}

test('an address asked for api-int is served only once a kube-apiserver answers there', async () => {
  const { gate: g, switches } = gate(await apiServer(200));
  try {
    assert.equal(g.select('127.0.0.1', VIPS), VIPS, 'the VIP until the check passed');
    await until('the move', () => switches() === 1);
    assert.equal(g.select('127.0.0.1', VIPS), [{ kind: 'ip', ip: '127.0.0.1' }]);
    assert.is(g.describe(), 'api-int: 127.0.0.1 (verified)');
  } finally {
    g.stop();
  }
});

test('an address where no kube-apiserver answers is not served: the reason is said, counted and the check retried', async () => {
  const { gate: g, failures, switches } = gate(await apiServer(200));
  try {
    assert.equal(g.select('127.0.0.2', VIPS), VIPS);
    await until('two failed checks', () => failures.length >= 2);
    assert.equal(g.select('127.0.0.2', VIPS), VIPS);
    assert.is(switches(), 0);
    assert.ok(failures.every((r) => r === 'unreachable'));
    assert.match(g.describe(), /^api-int: the API VIP \(127\.0\.0\.3\), not yet 127\.0\.0\.2: 127\.0\.0\.2:\d+: ECONNREFUSED/);
  } finally {
    g.stop();
  }
});

test("a move is settled by its own first check, not by another address's failure: a one-shot command waits for it", async () => {
  const { gate: g, failures } = gate(await apiServer(200));
  try {
    g.select('127.0.0.2', VIPS);
    assert.not.ok(g.settled());
    await until('the first failed check', () => failures.length >= 1);
    assert.ok(g.settled());
    g.select('127.0.0.3', VIPS);
    assert.not.ok(g.settled(), 'the failure at 127.0.0.2 says nothing of 127.0.0.3');
    await until('its own failed check', () => failures.length >= 2 && g.settled());
  } finally {
    g.stop();
  }
});

test("an address asked for after another's failures is retried from the shortest delay, not the other's", async () => {
  const probes: { ip: string; at: number }[] = [];
  const g = new ApiIntGate({
    probe: (ip) => {
      probes.push({ ip, at: Date.now() });
      return Promise.reject(new Error('unreachable'));
    },
    log: quiet,
    onSwitch: () => undefined,
    retry: { minMs: 50, maxMs: 3200 },
  });
  try {
    g.select('127.0.0.2', VIPS);
    await until('five checks of 127.0.0.2', () => probes.length >= 5, 5000);
    g.select('127.0.0.4', VIPS);
    await until('two checks of 127.0.0.4', () => probes.filter((p) => p.ip === '127.0.0.4').length >= 2, 5000);
    const [first = 0, second = 0] = probes.filter((p) => p.ip === '127.0.0.4').map((p) => p.at);
    assert.ok(second - first < 400, `retried after ${second - first} ms`);
  } finally {
    g.stop();
  }
});

test('going back to the VIP is verified the same way', async () => {
  const { gate: g, switches } = gate(await apiServer(200));
  try {
    g.select('127.0.0.1', VIPS);
    await until('the move', () => switches() === 1);
    // The VIP (127.0.0.3) has no API server behind it: api-int stays where it is.
    assert.equal(g.select(undefined, VIPS), [{ kind: 'ip', ip: '127.0.0.1' }]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(g.select(undefined, VIPS), [{ kind: 'ip', ip: '127.0.0.1' }]);
    assert.match(g.describe(), /^api-int: 127\.0\.0\.1, not yet the API VIP \(127\.0\.0\.3\)/);
  } finally {
    g.stop();
  }
});

test('a gate whose Corefile served the address asked for before (a move verified, then a restart) serves it at once, unprobed', () => {
  const probed: string[] = [];
  const gate = new ApiIntGate({ probe: async (ip) => void probed.push(ip), log: quiet, onSwitch: () => undefined, servedBefore: '10.0.0.50' });
  assert.equal(gate.select('10.0.0.50', VIPS), [{ kind: 'ip', ip: '10.0.0.50' }]);
  assert.equal(probed, []);
  gate.stop();
});

test('a gate whose Corefile served another address than the one asked for keeps serving it while it verifies the one asked for', () => {
  const probed: string[] = [];
  const gate = new ApiIntGate({ probe: (ip) => (probed.push(ip), new Promise(() => undefined)), log: quiet, onSwitch: () => undefined, servedBefore: '10.0.0.49' });
  assert.equal(gate.select('10.0.0.50', VIPS), [{ kind: 'ip', ip: '10.0.0.49' }]);
  assert.equal(probed, ['10.0.0.50']);
  gate.stop();
});

test('a gate restarted with no address asked for (HostedNetServices not read yet, or removed) keeps the address its Corefile served until the VIP is verified', () => {
  const probed: string[] = [];
  const gate = new ApiIntGate({ probe: (ip) => (probed.push(ip), new Promise(() => undefined)), log: quiet, onSwitch: () => undefined, servedBefore: '10.0.0.50' });
  assert.equal(gate.select(undefined, VIPS), [{ kind: 'ip', ip: '10.0.0.50' }]);
  assert.equal(probed, ['127.0.0.3']);
  assert.is(gate.describe(), 'api-int: 10.0.0.50, not yet the API VIP (127.0.0.3): verifying');
  gate.stop();
});

test('a gate whose Corefile served the VIP starts from the VIP, unprobed', () => {
  const probed: string[] = [];
  const gate = new ApiIntGate({ probe: async (ip) => void probed.push(ip), log: quiet, onSwitch: () => undefined, servedBefore: '127.0.0.3' });
  assert.equal(gate.select(undefined, VIPS), VIPS);
  assert.equal(probed, []);
  assert.is(gate.describe(), 'api-int: the API VIP (127.0.0.3)');
  gate.stop();
});

test("on-prem, a pod restarted after a verified move serves the moved address from its first Corefile, though the address is not re-verified yet", async () => {
  await withOnPrem({ switches: true }, async (c) => {
    // 127.0.0.2: no kube-apiserver answers there, so only the Corefile on disk can say the move was verified.
    await c.server.create(hostedNetServices({ apiintIpAddress: '127.0.0.2' }));
    const first = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', '10.0.0.2']);
    assert.is(first.code, 0, first.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`], 'a first boot serves the VIP until the move is verified');
    await writeFile(c.out, (await readFile(c.out, 'utf8')).replaceAll(`IN A ${API_VIP}"`, 'IN A 127.0.0.2"'));
    const restarted = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', '10.0.0.2']);
    assert.is(restarted.code, 0, restarted.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), ['A 127.0.0.2']);
  });
});

test("on-prem, render-dnsmasq run again after a verified move keeps the moved address its hosts file served, though not re-verified yet", async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({ apiintIpAddress: '127.0.0.2' }));
    const dropIn = join(dirname(c.out), 'lbdns.conf');
    const hosts = join(dirname(c.out), 'lbdns.hosts', 'api-int');
    const args = ['render-dnsmasq', c.kubeconfig, '--listen', '127.0.0.1:5353', '--out', dropIn, '--upstream', '10.0.0.2'];
    const first = await runLbdns(args);
    assert.is(first.code, 0, first.stderr);
    assert.match(await readFile(hosts, 'utf8'), new RegExp(`^${API_VIP.replaceAll('.', '\\.')} api-int\\.`, 'm'), 'a first boot serves the VIP until the move is verified');
    // What an earlier run that verified the move wrote: 127.0.0.2, where no kube-apiserver answers now.
    await writeFile(hosts, (await readFile(hosts, 'utf8')).replace(`${API_VIP} api-int.`, '127.0.0.2 api-int.'));
    const again = await runLbdns(args);
    assert.is(again.code, 0, again.stderr);
    assert.match(await readFile(hosts, 'utf8'), /^127\.0\.0\.2 api-int\./m);
  });
});

/**
 * HostedNetServices asks for api-int at `address`, and the kubeconfig's CA bundle, which a move
 * is checked with, holds the API server's CA and the one that signed the certificate of the
 * server at that address.
 */
async function askApiIntAt(c: Parameters<Parameters<typeof withOnPrem>[1]>[0], address: string): Promise<void> {
  const kubeconfig = parseYaml(await readFile(c.kubeconfig, 'utf8')) as { clusters: { cluster: Record<string, unknown> }[] };
  for (const entry of kubeconfig.clusters) entry.cluster['certificate-authority-data'] = Buffer.from(`${c.server.ca}${ca.cert}`).toString('base64');
  await writeFile(c.kubeconfig, toYaml(kubeconfig));
  await c.server.create(hostedNetServices({ apiintIpAddress: address }));
}

test('on-prem, the monitor moves api-int to the address HostedNetServices asks for once an API server answers there, and not to one where none does', async () => {
  const port = await apiServer(200, `api-int.${DOMAIN}`);
  await withOnPrem({ switches: true }, async (c) => {
    await askApiIntAt(c, '127.0.0.1');
    const monitor = await startMonitor(c, { apiPort: port });
    try {
      const apiInt = async () => (await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`)?.join();
      await until('api-int moved', async () => (await apiInt()) === 'A 127.0.0.1', 8000);
      await c.server.mergePatch(HNS, { spec: { dns: { apiintIpAddress: '127.0.0.2' } } });
      await until('the failed check logged', () => monitor.logs().some((l) => l.msg === 'api-int not moved: no kube-apiserver proven at the address; serving the previous one' && l.asked === '127.0.0.2'), 8000);
      assert.is(await apiInt(), 'A 127.0.0.1');
      const ready = await (await fetch(`http://${monitor.health}/readyz`)).text();
      assert.match(ready, /api-int: 127\.0\.0\.1, not yet 127\.0\.0\.2: 127\.0\.0\.2:\d+: ECONNREFUSED/);
      assert.ok(!(await apiInt())?.includes(API_VIP));
    } finally {
      await monitor.stop();
    }
  });
});

/** A TCP relay on `host`:`port` to 127.0.0.1:`port`, its connections cut when closed: a path to the API server that an admin removes. */
async function relay(host: string, port: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

test("on-prem, a monitor that reaches the API server at api-int's address follows a verified move, and keeps working once the old path is removed", async () => {
  await withOnPrem({ switches: true, own: { sans: [API_INT_ONPREM] }, status: { apiServerInternalIPs: ['127.0.0.2'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    const port = Number(new URL(c.server.url).port);
    // The VIP, 127.0.0.2, is a path to the API server that goes away; the move is to 127.0.0.1, where it listens.
    const vip = await relay('127.0.0.2', port);
    try {
      const kubeconfig = join(c.dir, 'kubelet-kubeconfig');
      await writeFile(kubeconfig, toYaml({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: `https://${API_INT_ONPREM}:${port}`, 'certificate-authority-data': Buffer.from(c.server.ca).toString('base64') } }], users: [{ name: 'u', user: { token: c.server.adminToken } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
      // The Corefile of an earlier run serves api-int at the VIP: the monitor connects there.
      const before = await runLbdns(['render-corefile', '--domain', DOMAIN, '--api-lb', '127.0.0.2', '--api-int-lb', '127.0.0.2', '--ingress-lb', INGRESS_VIP, '--upstream', '10.0.0.2', '--out', c.out]);
      assert.is(before.code, 0, before.stderr);
      await c.server.create(hostedNetServices({ apiintIpAddress: '127.0.0.1' }));
      const monitor = await startMonitor({ ...c, kubeconfig }, { apiPort: port });
      try {
        const apiInt = async () => (await readAnswers(c.out))?.names.get(API_INT_ONPREM)?.join();
        await until('api-int moved', async () => (await apiInt()) === 'A 127.0.0.1', 10_000);
        await vip.close();
        await c.server.patchStatus({ resource: 'infrastructures', name: 'cluster' }, { platformStatus: { baremetal: { apiServerInternalIPs: ['127.0.0.2'], ingressIPs: ['192.168.111.40'] } } });
        await until('the new ingress VIP served', async () => (await readAnswers(c.out))?.names.get(`*.apps.${DOMAIN}`)?.join() === 'A 192.168.111.40', 15_000);
      } finally {
        await monitor.stop();
      }
    } finally {
      await vip.close();
    }
  });
});

test('on-prem, print-records prints api-int where a node would serve it: a move a kube-apiserver answers, not the VIP', async () => {
  const port = await apiServer(200, `api-int.${DOMAIN}`);
  await withOnPrem({ switches: true }, async (c) => {
    await askApiIntAt(c, '127.0.0.1');
    const r = await runLbdns(['print-records', c.kubeconfig, '--api-port', String(port), '--names', 'api-int', '--format', 'json', '--upstream', '10.0.0.2']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { value: string }[]).map((x) => x.value), ['127.0.0.1']);
  });
});

test.run();
