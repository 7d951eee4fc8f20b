/**
 * The design's roles read from a cluster and from config files: what each serves, what it
 * reads, and that a setting a role does not use is never dropped without a word.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APPS, API_INT_IP, API_IP, DOMAIN, INGRESS_IP, LB_CONFIG, readAnswers, ROUTER, startCluster, startMonitor, until, UPSTREAM, type ClusterFixture } from './support/cluster-fixture.js';
import { logLines, runLbdns } from './support/run-cli.js';

async function withCluster(seed: Parameters<typeof startCluster>[0], body: (c: ClusterFixture) => Promise<void>): Promise<void> {
  const cluster = await startCluster(seed);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}

const pathsRead = async (c: ClusterFixture): Promise<string[]> => [...new Set((await c.server.requests()).map((r) => r.uri.split('?')[0] ?? ''))].sort();

test('bootstrap from a cluster serves api-int and *.apps, and reads neither Nodes nor DNSRecords', async () => {
  await withCluster({}, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--role', 'bootstrap', '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal([...(answers?.names.keys() ?? [])], [`api-int.${DOMAIN}`, APPS]);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_IP}`]);
    assert.equal(answers?.nodes.size, 0);
    const paths = await pathsRead(c);
    assert.not.ok(paths.some((p) => p.endsWith('/nodes') || p.endsWith('/dnsrecords')), paths.join(' '));
  });
});

test('bootstrap before the router has an LB: writes api-int at once, *.apps not served and said so', async () => {
  await withCluster({ ingress: [] }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--role', 'bootstrap', '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal([...((await readAnswers(c.out))?.names.keys() ?? [])], [`api-int.${DOMAIN}`]);
    const said = logLines(r.stderr).find((l) => l.msg === 'not served: their queries go upstream');
    assert.equal(said?.notServed, [{ name: APPS, reason: 'no load balancer known yet' }]);
  });
});

test('the bootstrap monitor adds *.apps when the ingress LB appears', async () => {
  await withCluster({ ingress: [] }, async (c) => {
    const monitor = await startMonitor(c, { flags: { role: 'bootstrap' } });
    try {
      await until('api-int written', async () => (await readAnswers(c.out))?.names.has(`api-int.${DOMAIN}`) === true);
      await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: INGRESS_IP }] } });
      await until('*.apps written', async () => (await readAnswers(c.out))?.names.get(APPS)?.[0] === `A ${INGRESS_IP}`);
    } finally {
      assert.is(await monitor.stop(), 0);
    }
  });
});

test('apps-only from a cluster serves *.apps alone and reads only the router Service', async () => {
  await withCluster({}, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--role', 'apps-only', '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal([...(answers?.names.keys() ?? [])], [APPS]);
    assert.equal(answers?.nodes.size, 0);
    const sources = (await pathsRead(c)).filter((p) => !p.endsWith('/infrastructures/cluster') && !p.endsWith('/dnses/cluster'));
    assert.equal(sources, [`/api/v1/namespaces/${ROUTER.namespace}/services`]);
  });
});

test('a worker renders what a control-plane node renders', async () => {
  await withCluster({}, async (c) => {
    const render = async (role: string) => {
      const r = await runLbdns(['render-corefile', c.kubeconfig, '--role', role, '--upstream', UPSTREAM]);
      assert.is(r.code, 0, r.stderr);
      return r.stdout.split('\n').slice(1).join('\n');
    };
    const worker = await render('worker');
    assert.match(worker, `api.${DOMAIN}`);
    assert.match(worker, 'master-0');
    assert.is(worker, await render('control-plane'));
  });
});

const PRIVATE = 'served by the internal API load balancer: a private cluster has no external one';

test('a private cluster (no external API LB in the ConfigMap): api is served by the internal API LB, and said so', async () => {
  await withCluster({}, async (c) => {
    await c.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': null } });
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const names = (await readAnswers(c.out))?.names;
    assert.equal([...(names?.keys() ?? [])].sort(), [APPS, `api-int.${DOMAIN}`, `api.${DOMAIN}`]);
    assert.equal(names?.get(`api.${DOMAIN}`), [`A ${API_INT_IP}`]);
    assert.ok(logLines(r.stderr).some((l) => l.msg === `api.${DOMAIN}: ${PRIVATE}`), r.stderr);
  });
});

test("a private cluster's monitor is ready, serves api from the internal API LB and logs it with the Corefile", async () => {
  await withCluster({}, async (c) => {
    await c.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': null } });
    const monitor = await startMonitor(c);
    try {
      await until('ready', async () => (await fetch(`http://${monitor.health}/readyz`)).status === 200);
      const written = monitor.logs().find((l) => l.msg === 'Corefile written');
      assert.equal(written?.notServed, []);
      assert.equal(written?.notes, [{ name: `api.${DOMAIN}`, note: PRIVATE }]);
    } finally {
      assert.is(await monitor.stop(), 0);
    }
  });
});

test('a private cluster from a config file without api serves api from its internal LB, api-int and *.apps', async () => {
  await withCluster({}, async (c) => {
    const config = join(c.dir, 'private.yaml');
    await writeFile(config, `domain: ${DOMAIN}\nloadBalancers:\n  apiInt: [${API_INT_IP}]\n  ingress: [${INGRESS_IP}]\nupstreams: [${UPSTREAM}]\n`);
    const r = await runLbdns(['render-corefile', '--config', config, '--out', c.out]);
    assert.is(r.code, 0, r.stderr);
    assert.equal([...((await readAnswers(c.out))?.names.keys() ?? [])].sort(), [APPS, `api-int.${DOMAIN}`, `api.${DOMAIN}`]);
    assert.match(r.stderr, PRIVATE);
  });
});

test('a config file shared by every role: the bootstrap node warns about what it does not serve and renders the rest', async () => {
  await withCluster({}, async (c) => {
    const config = join(c.dir, 'shared.yaml');
    await writeFile(config, `domain: ${DOMAIN}\nloadBalancers:\n  api: [${API_IP}]\n  apiInt: [${API_INT_IP}]\n  ingress: [${INGRESS_IP}]\nnodes:\n  master-0: [10.0.0.5]\nupstreams: [${UPSTREAM}]\n`);
    const r = await runLbdns(['render-corefile', '--config', config, '--role', 'bootstrap', '--out', c.out]);
    assert.is(r.code, 0, r.stderr);
    const warning = logLines(r.stderr).find((l) => l.level === 'warn');
    assert.equal(warning, { ...warning, msg: 'the config file sets what this role does not serve; ignored', role: 'bootstrap', settings: ['--api-lb', '--node'], source: config });
    assert.not.match(await readFile(c.out, 'utf8'), `api.${DOMAIN}`);
  });
});

test('a flag the role does not serve is refused before anything is read: exit 2', async () => {
  await withCluster({}, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--role', 'apps-only', '--api-int-lb', API_INT_IP, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, 'lbdns: error: --api-int-lb: is not served by role apps-only; drop it, or choose the role that serves it: apps-only serves *.apps');
    assert.is((await c.server.requests()).length, 0);
  });
});

test.run();
