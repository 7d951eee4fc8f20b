import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  answersOf,
  APPS,
  REFRESH_WAIT_MS,
  API_INT_IP,
  API_IP,
  dnsRecord,
  DNSRECORD_NS,
  DOMAIN,
  fileId,
  INGRESS_IP,
  LB_CONFIG,
  node,
  readAnswers,
  ROUTER,
  sleep,
  startCluster,
  startFakeCluster,
  startMonitor,
  until,
  UPSTREAM,
  watchesOpen,
  type ClusterAccess,
  type ClusterFixture,
  type FakeClusterFixture,
  type RealClusterSeed,
  type CorefileAnswers,
  type RunningMonitor,
} from './support/cluster-fixture.js';
import { withDnsServer } from './support/dns-server.js';
import { freePort } from './support/peers.js';
import type { PolicyRule } from './support/kube-api-server.js';
import { runLbdns } from './support/run-cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUTER_LB = 'router-0123.elb.us-east-1.example.net';

/** Runs `body` with a seeded cluster on the real kube-apiserver and a running monitor, stopping both whatever happens. */
async function withMonitor(setup: { cluster?: RealClusterSeed; monitor?: Parameters<typeof startMonitor>[1] }, body: (c: ClusterFixture, m: RunningMonitor) => Promise<void>): Promise<void> {
  const cluster = await startCluster(setup.cluster);
  let monitor: RunningMonitor | undefined;
  try {
    monitor = await startMonitor(cluster, setup.monitor);
    await body(cluster, monitor);
    assert.is(await monitor.stop(), 0);
  } finally {
    await monitor?.stop();
    await cluster.close();
  }
}

/** As withMonitor, on the test API server, whose history a test compacts. */
async function withFakeMonitor(body: (c: FakeClusterFixture, m: RunningMonitor) => Promise<void>): Promise<void> {
  const cluster = await startFakeCluster();
  let monitor: RunningMonitor | undefined;
  try {
    monitor = await startMonitor(cluster);
    await body(cluster, monitor);
    assert.is(await monitor.stop(), 0);
  } finally {
    await monitor?.stop();
    await cluster.close();
  }
}

const served = async (c: ClusterAccess, name: string, answer: string) => (await answersOf(c.out, name)).includes(answer);
const firstRender = (c: ClusterAccess) => until('the first render', () => served(c, APPS, `A ${INGRESS_IP}`));

/** Every name the seeded cluster serves still has its addresses. */
function assertNothingBlanked(answers: CorefileAnswers | undefined, ingress: string): void {
  assert.ok(answers, 'the Corefile is still on disk');
  assert.equal(answers.names.get(`api.${DOMAIN}`), [`A ${API_IP}`]);
  assert.equal(answers.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
  assert.equal(answers.names.get(APPS), [`A ${ingress}`]);
  assert.equal(answers.nodes.get('master-0'), ['10.0.0.5']);
}

test('the first Corefile a process writes says so, and the next lists only what changed', async () => {
  await withMonitor({}, async (c, m) => {
    await firstRender(c);
    // The file is on disk at the rename; the line is logged after the directory's sync.
    await until('the first Corefile logged', () => m.logs().some((l) => l.msg === 'Corefile written'));
    const first = m.logs().find((l) => l.msg === 'Corefile written');
    assert.is(first?.firstSinceStart, true);
    assert.is(first?.changes, undefined);
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.99' }] } });
    await until('the new ingress IP on disk', () => served(c, APPS, 'A 10.0.1.99'));
    await until('the second log line', () => m.logs().filter((l) => l.msg === 'Corefile written').length === 2);
    const second = m.logs().filter((l) => l.msg === 'Corefile written')[1];
    assert.equal(second?.changes, [{ name: APPS, from: [INGRESS_IP], to: ['10.0.1.99'] }]);
  });
});

test('a Service status patched from one LB to another is rewritten into the Corefile', async () => {
  await withMonitor({}, async (c) => {
    await firstRender(c);
    const start = Date.now();
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.99' }] } });
    await until('the new ingress IP on disk', () => served(c, APPS, 'A 10.0.1.99'));
    console.log(`propagation: ${Date.now() - start} ms`);
    assert.equal(await answersOf(c.out, APPS), ['A 10.0.1.99']);
  });
});

test("an LB whose cluster data turns malformed, every entry refused, keeps serving its addresses: bad data is not \"no LB\"", async () => {
  await withMonitor({}, async (c, m) => {
    await firstRender(c);
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.030' }] } });
    await c.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': '10.0.0.20;10.0.0.21' } });
    await until('both refusals logged', () => ['status.loadBalancer.ingress[0].ip', 'data.internal-api-lb-ips[0]'].every((w) => m.logs().some((l) => String(l.where ?? '').endsWith(w))));
    await until('both names held', () => [`api-int.${DOMAIN}`, APPS].every((name) => m.logs().some((l) => l.msg === 'serving a name with its previous addresses' && l.name === name)));
    assert.equal(await answersOf(c.out, APPS), [`A ${INGRESS_IP}`]);
    assert.equal(await answersOf(c.out, `api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.99' }] } });
    await until('a valid address served again', () => served(c, APPS, 'A 10.0.1.99'));
  });
});

test('an LB hostname whose DNS answer changes is followed without any API request', async () => {
  await withDnsServer(async (dns) => {
    dns.set(ROUTER_LB, { A: ['10.0.1.30'], ttl: 1 });
    const setup = { cluster: { ingress: [{ hostname: ROUTER_LB }] }, monitor: { flags: { dnsServers: [dns.address] } } };
    await withMonitor(setup, async (c) => {
      await firstRender(c);
      await watchesOpen(c.server);
      await c.server.clearRequests();
      dns.set(ROUTER_LB, { A: ['10.0.1.31', '10.0.1.32'], ttl: 1 });
      await until('the new DNS answer on disk', () => served(c, APPS, 'A 10.0.1.32'), REFRESH_WAIT_MS);
      assert.equal(await answersOf(c.out, APPS), ['A 10.0.1.31', 'A 10.0.1.32']);
      assert.equal(await c.server.requests(), [], 'no API request: the change came from DNS alone');
    });
  });
});

test('a node whose IP changes under the same name is rewritten', async () => {
  await withMonitor({}, async (c) => {
    await until('the node on disk', async () => (await readAnswers(c.out))?.nodes.get('master-0')?.[0] === '10.0.0.5');
    await c.server.update(node('master-0', ['10.0.0.6']));
    await until('the new node IP on disk', async () => (await readAnswers(c.out))?.nodes.get('master-0')?.[0] === '10.0.0.6');
    assert.equal((await readAnswers(c.out))?.nodes.get('master-0'), ['10.0.0.6']);
  });
});

test('a node added to the cluster is served by the running monitor, the others kept', async () => {
  await withMonitor({}, async (c) => {
    await until('the first node on disk', async () => (await readAnswers(c.out))?.nodes.get('master-0')?.[0] === '10.0.0.5');
    await c.server.create(node('worker-3', ['10.0.0.33']));
    await until('the new node on disk', async () => (await readAnswers(c.out))?.nodes.get('worker-3')?.[0] === '10.0.0.33');
    assert.equal((await readAnswers(c.out))?.nodes.get('master-0'), ['10.0.0.5']);
  });
});

test('a DNSRecord turned Unmanaged stops being served, and is served again once Managed', async () => {
  const name = `*.apps2.${DOMAIN}`;
  const ref = { resource: 'dnsrecords', namespace: DNSRECORD_NS, name: 'apps2-wildcard' };
  await withMonitor({}, async (c) => {
    await c.server.create(dnsRecord(ref.name, { dnsName: `${name}.`, targets: ['10.0.2.40'] }));
    await until('the Managed record on disk', () => served(c, name, 'A 10.0.2.40'));
    await c.server.mergePatch(ref, { spec: { dnsManagementPolicy: 'Unmanaged' } });
    await until('the Unmanaged record dropped', async () => !(await readAnswers(c.out))?.names.has(name));
    assertNothingBlanked(await readAnswers(c.out), INGRESS_IP);
    await c.server.mergePatch(ref, { spec: { dnsManagementPolicy: 'Managed' } });
    await until('the record served again', () => served(c, name, 'A 10.0.2.40'));
  });
});

test('an API outage blanks nothing, and changes made during it are served after reconnecting past a compacted history', async () => {
  await withFakeMonitor(async (c) => {
    await firstRender(c);
    await c.server.stop();
    c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.31' }] } });
    c.server.update(node('master-0', ['10.0.0.6']));
    c.server.compact();
    const outageEnds = Date.now() + 1500;
    while (Date.now() < outageEnds) {
      assertNothingBlanked(await readAnswers(c.out), INGRESS_IP);
      await sleep(25);
    }
    c.server.clearRequests();
    await c.server.start();
    await until(
      'the outage changes on disk',
      async () => {
        const answers = await readAnswers(c.out);
        return answers?.names.get(APPS)?.[0] === 'A 10.0.1.31' && answers.nodes.get('master-0')?.[0] === '10.0.0.6';
      },
      5000,
    );
    assert.ok(
      c.server.requests.some((r) => !r.watch && r.verb === 'list' && r.path.endsWith('/services')),
      'the expired watch was followed by a fresh list',
    );
  });
});

test('DNS SERVFAIL for a while blanks nothing, and the answer after recovery is served', async () => {
  await withDnsServer(async (dns) => {
    dns.set(ROUTER_LB, { A: ['10.0.1.30'], ttl: 1 });
    const setup = { cluster: { ingress: [{ hostname: ROUTER_LB }] }, monitor: { flags: { dnsServers: [dns.address] } } };
    await withMonitor(setup, async (c, m) => {
      await firstRender(c);
      dns.fail(ROUTER_LB, 'servfail');
      await until(
        'a failed re-resolution',
        async () => {
          assertNothingBlanked(await readAnswers(c.out), '10.0.1.30');
          return m.logs().some((l) => l.msg === 'resolving an LB hostname failed; serving its last known good addresses' && l.reason === 'SERVFAIL');
        },
        REFRESH_WAIT_MS,
      );
      assertNothingBlanked(await readAnswers(c.out), '10.0.1.30');
      dns.set(ROUTER_LB, { A: ['10.0.1.33'], ttl: 1 });
      dns.fail(ROUTER_LB, null);
      await until('the answer after recovery on disk', () => served(c, APPS, 'A 10.0.1.33'), 5000);
    });
  });
});

test("a monitor restarted while a DNSRecord's target host name SERVFAILs serves the addresses the Corefile on disk had, then the new ones once it resolves", async () => {
  const name = `*.apps2.${DOMAIN}`;
  const target = 'router2-0123.elb.us-east-1.example.net';
  await withDnsServer(async (dns) => {
    dns.set(target, { A: ['10.0.2.40'], ttl: 1 });
    const cluster = await startCluster();
    let monitor: RunningMonitor | undefined;
    try {
      await cluster.server.create(dnsRecord('apps2-wildcard', { dnsName: `${name}.`, targets: [target], recordType: 'CNAME' }));
      monitor = await startMonitor(cluster, { flags: { dnsServers: [dns.address] } });
      await until('the record on disk', () => served(cluster, name, 'A 10.0.2.40'));
      assert.is(await monitor.stop(), 0);
      dns.fail(target, 'servfail');
      monitor = await startMonitor(cluster, { flags: { dnsServers: [dns.address] } });
      const again = monitor;
      await until('the held record logged', () => again.logs().some((l) => l.msg === 'serving a name with its previous addresses' && l.name === name));
      assert.ok(await served(cluster, name, 'A 10.0.2.40'));
      assertNothingBlanked(await readAnswers(cluster.out), INGRESS_IP);
      dns.set(target, { A: ['10.0.2.41'], ttl: 1 });
      dns.fail(target, null);
      await until('the answer after recovery on disk', () => served(cluster, name, 'A 10.0.2.41'), REFRESH_WAIT_MS);
      assert.is(await monitor.stop(), 0);
    } finally {
      await monitor?.stop();
      await cluster.close();
    }
  });
});

test('DNS timeouts for a while blank nothing, and the answer after them is served', async () => {
  await withDnsServer(async (dns) => {
    dns.set(ROUTER_LB, { A: ['10.0.1.30'], ttl: 1 });
    const setup = { cluster: { ingress: [{ hostname: ROUTER_LB }] }, monitor: { flags: { dnsServers: [dns.address] } } };
    await withMonitor(setup, async (c) => {
      await firstRender(c);
      dns.resetCounts();
      dns.failAll('timeout');
      // The outage lasts until the cache has asked at least once, and then one more second.
      await until(
        'a query during the outage',
        async () => {
          assertNothingBlanked(await readAnswers(c.out), '10.0.1.30');
          return dns.queries(ROUTER_LB) > 0;
        },
        REFRESH_WAIT_MS,
      );
      const outageEnds = Date.now() + 1000;
      while (Date.now() < outageEnds) {
        assertNothingBlanked(await readAnswers(c.out), '10.0.1.30');
        await sleep(25);
      }
      dns.set(ROUTER_LB, { A: ['10.0.1.34'], ttl: 1 });
      dns.failAll(null);
      await until('the answer after the timeouts on disk', () => served(c, APPS, 'A 10.0.1.34'), REFRESH_WAIT_MS);
    });
  });
});

test('an idle monitor neither rewrites the Corefile nor asks the API anything', async () => {
  await withMonitor({}, async (c) => {
    await firstRender(c);
    await watchesOpen(c.server);
    const before = await fileId(c.out);
    await c.server.clearRequests();
    await sleep(3000);
    assert.equal(await fileId(c.out), before);
    assert.equal(await c.server.requests(), []);
  });
});

/** SIGTERM must end the monitor with exit 0 within a second, whatever it is doing. */
async function exitsPromptlyOnSigterm(child: ReturnType<typeof spawnMonitor>): Promise<number> {
  const sent = Date.now();
  const result = await child.terminate(1000);
  assert.ok(result, `still running 1 s after SIGTERM:\n${child.stderr()}`);
  assert.equal(result, { code: 0, signal: null }, child.stderr());
  return Date.now() - sent;
}

/** The real CLI in a child process: what the container runs. */
function spawnMonitor(cluster: ClusterAccess, extra: readonly string[] = []) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'cmd/lbdns.ts', 'watch-lb-status', cluster.kubeconfig, '--out', cluster.out, '--upstream', '10.0.0.2', '--metrics-addr', '127.0.0.1:0', ...extra],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    stderr: () => stderr,
    /** Sends SIGTERM and waits at most `ms` for the exit. */
    terminate: async (ms: number) => {
      child.kill('SIGTERM');
      return Promise.race([exited, sleep(ms).then(() => undefined)]);
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

test('SIGTERM ends the monitor process with exit 0 within a second', async () => {
  const cluster = await startCluster();
  const child = spawnMonitor(cluster);
  try {
    await until('the first render', () => served(cluster, APPS, `A ${INGRESS_IP}`), 10_000);
    console.log(`exit after SIGTERM: ${await exitsPromptlyOnSigterm(child)} ms`);
  } finally {
    await child.kill();
    await cluster.close();
  }
});

test('SIGTERM while the monitor still waits for an unreachable API server exits 0 within a second', async () => {
  const cluster = await startFakeCluster();
  await cluster.server.stop();
  const child = spawnMonitor(cluster, ['--wait-timeout', '60s']);
  try {
    await until('a failed attempt to read the cluster', () => child.stderr().includes('reading the cluster failed'), 10_000);
    await exitsPromptlyOnSigterm(child);
  } finally {
    await child.kill();
    await cluster.close();
  }
});

test('SIGTERM while the first list of Nodes goes unanswered exits 0 within a second', async () => {
  const cluster = await startFakeCluster();
  cluster.server.failNext({ verb: 'list', pathIncludes: '/nodes' }, 'unanswered', 100);
  const child = spawnMonitor(cluster);
  try {
    await until('an unanswered list of Nodes', () => cluster.server.requests.some((r) => r.verb === 'list' && r.path.endsWith('/nodes') && r.status === 0), 10_000);
    await exitsPromptlyOnSigterm(child);
  } finally {
    await child.kill();
    await cluster.close();
  }
});

test('SIGTERM while an LB hostname query is timing out still exits 0 within a second', async () => {
  await withDnsServer(async (dns) => {
    dns.set(ROUTER_LB, { A: ['10.0.1.30'], ttl: 1 });
    const cluster = await startCluster({ ingress: [{ hostname: ROUTER_LB }] });
    // The default 5 s floor on re-resolution applies: the query in flight is the first one.
    dns.failAll('timeout');
    const child = spawnMonitor(cluster, ['--dns-server', dns.address]);
    try {
      await until('a query in flight', () => dns.queries(ROUTER_LB) > 0, 10_000);
      await exitsPromptlyOnSigterm(child);
    } finally {
      await child.kill();
      await cluster.close();
    }
  });
});

test('/healthz answers at once; /readyz is 503 until the first complete render, then 200', async () => {
  await withMonitor({ cluster: { ingress: null } }, async (c, m) => {
    const get = async (path: string) => (await fetch(`http://${m.health}${path}`)).status;
    assert.is(await get('/healthz'), 200);
    assert.is(await get('/readyz'), 503);
    await sleep(200);
    assert.is(await readAnswers(c.out), undefined, 'nothing written while *.apps has no address');
    assert.is(await get('/readyz'), 503);
    await c.server.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: ROUTER.name, namespace: ROUTER.namespace },
      spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      status: { loadBalancer: { ingress: [{ ip: INGRESS_IP }] } },
    });
    await firstRender(c);
    await until('/readyz 200', async () => (await get('/readyz')) === 200);
    assert.is(await get('/healthz'), 200);
  });
});

test("another DNS server on the port CoreDNS is to use is found: /readyz 503 naming the address, lbdns_ready 0, an error logged, and ready again once it is gone", async () => {
  await withDnsServer(async (other) => {
    const healthPort = await freePort(); // this pod's CoreDNS is not running: nothing answers its health
    await withMonitor({ monitor: { flags: { listen: `127.0.0.1:${other.port}`, healthPort: String(healthPort) } } }, async (c, m) => {
      await firstRender(c);
      const readyz = async () => {
        const res = await fetch(`http://${m.health}/readyz`);
        return { status: res.status, body: await res.text() };
      };
      await until('the conflict found', async () => (await readyz()).status === 503, 20_000);
      assert.match((await readyz()).body, `another DNS server answers at 127.0.0.1:${other.port}, the address it is to listen on`);
      assert.ok(m.logs().some((l) => l.level === 'error' && String(l.msg).startsWith('CoreDNS is not running, and another DNS server answers')));
      const ready = async () => /^lbdns_ready (\d)$/m.exec(await (await fetch(`http://${m.health}/metrics`)).text())?.[1];
      assert.is(await ready(), '0', 'the alert on lbdns_ready sees what /readyz says');
      await other.close();
      await until('ready again', async () => (await readyz()).status === 200, 20_000);
      assert.is(await ready(), '1');
    });
  });
});

test('a custom template whose Corefile fails the check writes nothing, and /readyz stays 503', async () => {
  const cluster = await startCluster();
  const builtin = await readFile(join(ROOT, 'templates', 'corefile.eta'), 'utf8');
  // IPv4 addresses answered as AAAA records inside the A template: CoreDNS would SERVFAIL every api query.
  const wrongFamily = builtin.replace('answer "<%= rr %>"', `answer "<%= rr.replace(' IN A ', ' IN AAAA ') %>"`);
  assert.is.not(wrongFamily, builtin);
  const template = join(cluster.dir, 'wrong-family.eta');
  await writeFile(template, wrongFamily);
  let monitor: RunningMonitor | undefined;
  try {
    const m = await startMonitor(cluster, { flags: { template } });
    monitor = m;
    await until('a failed render', () => m.logs().some((l) => l.msg === 'render failed; the Corefile on disk is kept'));
    const res = await fetch(`http://${m.health}/readyz`);
    assert.is(res.status, 503);
    assert.match(await res.text(), 'no complete Corefile written yet');
    assert.is(await readAnswers(cluster.out), undefined, 'no Corefile on disk');
    assert.is(await m.stop(), 0);
  } finally {
    await monitor?.stop();
    await cluster.close();
  }
});

test('without --out the monitor exits 2 at once, before asking the API server anything', async () => {
  const cluster = await startCluster();
  try {
    const started = Date.now();
    const r = await runLbdns(['watch-lb-status', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '30s', '--metrics-addr', '127.0.0.1:0']);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, '--out is required');
    assert.equal((await cluster.server.requests()).map((req) => `${req.verb} ${req.uri}`), []);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
  } finally {
    await cluster.close();
  }
});

test('/metrics reports the renders and the records served', async () => {
  await withMonitor({}, async (c, m) => {
    await firstRender(c);
    // The file is visible at its rename, before the directory sync and the counters: ready comes after both.
    await until('/readyz 200', async () => (await fetch(`http://${m.health}/readyz`)).status === 200);
    const res = await fetch(`http://${m.health}/metrics`);
    assert.is(res.status, 200);
    const text = await res.text();
    assert.match(text, /^lbdns_renders_total\{result="written"\} 1$/m);
    assert.match(text, /^lbdns_records_served\{kind="lb"\} 3$/m);
    assert.match(text, /^lbdns_records_served\{kind="node"\} 1$/m);
    assert.match(text, /^lbdns_ready 1$/m);
  });
});

// The real server refuses a hostname that is no DNS name (a brace) in a Service status; these it stores.
test('Service status entries the API server stores but lbdns cannot serve (empty, repeated, zero-padded) are skipped with a warning and never rendered', async () => {
  const ingress = [{}, { ip: INGRESS_IP }, { ip: INGRESS_IP }, { ip: '010.0.0.1' }];
  await withMonitor({ cluster: { ingress } }, async (c, m) => {
    await firstRender(c);
    const text = await readFile(c.out, 'utf8');
    assert.equal(await answersOf(c.out, APPS), [`A ${INGRESS_IP}`]);
    assert.not.match(text, '010.0.0.1');
    const warnings = m.logs().filter((l) => l.level === 'warn' && l.source === `service ${ROUTER.namespace}/${ROUTER.name}`);
    const at = (i: number) => warnings.filter((w) => String(w.where).startsWith(`service ${ROUTER.namespace}/${ROUTER.name} status.loadBalancer.ingress[${i}]`));
    assert.is(at(0).length, 1, 'the empty entry');
    assert.match(String(at(0)[0]?.msg), 'has neither ip nor hostname');
    assert.is(at(2).length, 1, 'the duplicate');
    assert.match(String(at(2)[0]?.msg), 'repeats an earlier entry');
    assert.is(at(3).length, 1, 'the zero-padded IP');
    assert.is(at(1).length, 0, 'the good entry');
  });
});

test('a Corefile write that fails is retried by itself, with no further cluster change', async () => {
  await withMonitor({}, async (c, m) => {
    await firstRender(c);
    // A directory where the Corefile belongs: the next write fails as a full or read-only disk would.
    await rm(c.out);
    await mkdir(c.out);
    await writeFile(join(c.out, 'blocker'), '');
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.99' }] } });
    await until('a failed write', () => m.logs().some((l) => l.level === 'error' && String(l.msg).startsWith('writing the Corefile failed')));
    await rm(c.out, { recursive: true });
    await until('the Corefile written by a retry', () => served(c, APPS, 'A 10.0.1.99'), 4000);
  });
});

test('a Corefile edited by hand is rewritten at the next computation, even one that changes nothing served', async () => {
  await withMonitor({}, async (c) => {
    await firstRender(c);
    const good = await readFile(c.out, 'utf8');
    await writeFile(c.out, `${good}\n# edited by hand\n`);
    // A label is nothing lbdns serves: the rendering stays the same, only a computation runs.
    await c.server.mergePatch(ROUTER, { metadata: { labels: { touched: 'yes' } } });
    await until('the Corefile restored', async () => (await readFile(c.out, 'utf8')) === good, 4000);
  });
});

const ALL_BUT_NODES: PolicyRule[] = [
  { verbs: ['get', 'list', 'watch'], apiGroups: ['config.openshift.io'], resources: ['infrastructures', 'dnses'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps', 'services'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: ['ingress.operator.openshift.io'], resources: ['dnsrecords'] },
];

test('watch-lb-status without the right to list nodes exits 2 within seconds, naming the resource', async () => {
  const cluster = await startCluster({ rules: ALL_BUT_NODES });
  try {
    const run = runLbdns(['watch-lb-status', cluster.kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--metrics-addr', '127.0.0.1:0']);
    const r = await Promise.race([run, sleep(4000).then(() => undefined)]);
    if (r === undefined) {
      // Still running: end it as the kubelet would, so the test process can exit.
      process.emit('SIGTERM');
      await run;
      assert.unreachable('still running 4 s after start without the right to list nodes');
      return;
    }
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /lbdns: error: list nodes: forbidden \(.*cannot list resource "nodes"/);
    assert.not.ok(await readAnswers(cluster.out), 'no Corefile written');
  } finally {
    await cluster.close();
  }
});

test.run();
