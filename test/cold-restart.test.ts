/**
 * A cluster's whole life: the API server gone after a full shutdown, the node's CoreDNS
 * restarted with it. The Corefile on disk is what lets the API server be found again, so a
 * restart must keep it, never blank it, and converge once the API answers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { dump as toYaml } from 'js-yaml';
import { API_INT_IP, APPS, DOMAIN, INGRESS_IP, readAnswers, ROUTER, startCluster, startMonitor, until, UPSTREAM, type ClusterFixture } from './support/cluster-fixture.js';
import { logLines, runLbdns } from './support/run-cli.js';
import { startDnsServer } from './support/dns-server.js';

const OLD = new Date('2026-01-02T03:04:05Z');

/** A cluster on a server of its own, which the test stops (the API gone) and may start again. */
async function withWrittenCorefile(body: (c: ClusterFixture) => Promise<void>): Promise<void> {
  const cluster = await startCluster({ own: {} });
  try {
    const r = await runLbdns(['render-corefile', cluster.kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    await utimes(cluster.out, OLD, OLD);
    await body(cluster);
  } finally {
    await cluster.close();
  }
}

/** A kubelet's kubeconfig: the API server named api-int.<domain>, which resolves nowhere, with the cluster CA. */
async function kubeletKubeconfig(cluster: ClusterFixture): Promise<string> {
  const port = new URL(cluster.server.url).port;
  const kubeconfig = join(cluster.dir, 'kubelet-kubeconfig');
  const server = `https://api-int.${DOMAIN}:${port}`;
  await writeFile(
    kubeconfig,
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'certificate-authority-data': Buffer.from(cluster.server.ca).toString('base64') } }],
      users: [{ name: 'u', user: { token: cluster.server.adminToken } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return kubeconfig;
}

const renderWhileDown = (c: ClusterFixture, ...extra: string[]) => runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '1s', ...extra]);

test('with --if-unreachable=keep and the API server down, a good Corefile is kept as it is: exit 0, a warning saying since when', async () => {
  await withWrittenCorefile(async (c) => {
    const before = await readFile(c.out, 'utf8');
    await c.server.stop();
    const r = await renderWhileDown(c, '--if-unreachable', 'keep');
    assert.is(r.code, 0, r.stderr);
    assert.is(await readFile(c.out, 'utf8'), before);
    assert.is((await stat(c.out)).mtimeMs, OLD.getTime());
    const warning = logLines(r.stderr).find((l) => l.level === 'warn' && String(l.msg).includes('--if-unreachable=keep'));
    assert.is(warning?.servedSince, OLD.toISOString());
  });
});

test('with --if-unreachable=keep and the API server down, the Corefile is kept whatever resolv.conf holds at boot (here none to read)', async () => {
  await withWrittenCorefile(async (c) => {
    await c.server.stop();
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--resolv-conf', join(c.dir, 'not-written-yet.conf'), '--wait-timeout', '1s', '--if-unreachable', 'keep']);
    assert.is(r.code, 0, r.stderr);
    assert.is((await stat(c.out)).mtimeMs, OLD.getTime());
  });
});

test('with --if-unreachable=keep and an API server that takes connections and never answers, the Corefile is kept by the wait timeout', async () => {
  await withWrittenCorefile(async (c) => {
    const before = await readFile(c.out, 'utf8');
    await c.server.stop();
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(Number(new URL(c.server.url).port), '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const r = await renderWhileDown(c, '--if-unreachable', 'keep');
      assert.is(r.code, 0, r.stderr);
      assert.ok(Date.now() - started < 10_000, `kept after ${Date.now() - started} ms`);
      assert.is(await readFile(c.out, 'utf8'), before);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

test('without --if-unreachable, the API server down fails as before and leaves the Corefile alone', async () => {
  await withWrittenCorefile(async (c) => {
    const before = await readFile(c.out, 'utf8');
    await c.server.stop();
    const r = await renderWhileDown(c);
    assert.is(r.code, 1);
    assert.is(await readFile(c.out, 'utf8'), before);
  });
});

test('--if-unreachable=keep with no Corefile on disk fails as without it', async () => {
  await withWrittenCorefile(async (c) => {
    await rm(c.out);
    await c.server.stop();
    const r = await renderWhileDown(c, '--if-unreachable', 'keep');
    assert.is(r.code, 1);
    assert.match(r.stderr, /ECONNREFUSED|still missing/);
  });
});

test('--if-unreachable=keep never passes off a Corefile that fails the check as last known good', async () => {
  await withWrittenCorefile(async (c) => {
    await writeFile(c.out, '. {\n    forward . 10.0.0.2\n');
    await c.server.stop();
    const r = await renderWhileDown(c, '--if-unreachable', 'keep');
    assert.is(r.code, 1);
    assert.match(r.stderr, /the API server is unreachable .* and the Corefile at .* fails the structural check, so it is not kept as last known good: Corefile line 1: server block is never closed/);
  });
});

test('an API server that answers is not "unreachable": keep still renders and writes', async () => {
  await withWrittenCorefile(async (c) => {
    const r = await renderWhileDown(c, '--if-unreachable', 'keep');
    assert.is(r.code, 0, r.stderr);
    assert.ok(logLines(r.stderr).some((l) => l.msg === 'Corefile unchanged'));
  });
});

test('the whole story: written, API gone and the pod restarted, kept and served, API back, converged on a change lbdns had not seen', async () => {
  await withWrittenCorefile(async (c) => {
    const before = await readFile(c.out, 'utf8');
    assert.equal((await readAnswers(c.out))?.names.get(APPS), [`A ${INGRESS_IP}`]);
    // The router's LB moves after the Corefile was written, and the API goes away before lbdns sees it.
    await c.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.77' }] } });
    await c.server.stop();
    // The pod restarted: its initContainer keeps the file, then the monitor starts on a cold cluster.
    const init = await renderWhileDown(c, '--if-unreachable', 'keep');
    assert.is(init.code, 0, init.stderr);
    const monitor = await startMonitor(c);
    try {
      const get = async (path: string) => {
        const res = await fetch(`http://${monitor.health}${path}`);
        return { status: res.status, text: await res.text() };
      };
      assert.is((await get('/healthz')).status, 200);
      const notReady = await get('/readyz');
      assert.is(notReady.status, 503);
      assert.match(notReady.text, /waiting for the API server since/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.is(await readFile(c.out, 'utf8'), before, 'nothing written while the API server is away');
      await c.server.start();
      await until('converged', async () => (await readAnswers(c.out))?.names.get(APPS)?.join() === 'A 10.0.1.77', 15_000);
      await until('/readyz 200', async () => (await get('/readyz')).status === 200);
    } finally {
      await monitor.stop();
    }
  });
});

test('a kubeconfig naming api-int, which resolves nowhere, reaches the API server at the address the last Corefile serves for it, TLS checked for the name', async () => {
  // The API server's certificate names api-int, as a cluster's does.
  const cluster = await startCluster({ own: { sans: [`api-int.${DOMAIN}`] } });
  try {
    // The last good Corefile: api-int was 127.0.0.1, where the API server listens.
    const first = await runLbdns(['render-corefile', '--domain', DOMAIN, '--api-lb', '10.0.0.10', '--api-int-lb', '127.0.0.1', '--ingress-lb', '10.0.1.30', '--upstream', UPSTREAM, '--out', cluster.out]);
    assert.is(first.code, 0, first.stderr);
    const kubeconfig = await kubeletKubeconfig(cluster);
    const r = await runLbdns(['render-corefile', kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const pinned = logLines(r.stderr).find((l) => String(l.msg).startsWith('the kubeconfig names the API server by a name lbdns serves'));
    assert.equal([pinned?.server, pinned?.address, pinned?.tlsServerName], [`api-int.${DOMAIN}`, '127.0.0.1', `api-int.${DOMAIN}`]);
    assert.equal((await readAnswers(cluster.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`], 'the cluster was read');
  } finally {
    await cluster.close();
  }
});

test("a node's first boot: no Corefile yet and a kubeconfig naming api-int, which resolves nowhere; --api-int-seed reaches the API server, TLS checked for the name", async () => {
  const cluster = await startCluster({ own: { sans: [`api-int.${DOMAIN}`] } });
  try {
    const kubeconfig = await kubeletKubeconfig(cluster);
    const without = await runLbdns(['render-corefile', kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '2s']);
    assert.is(without.code, 1, 'without a seed the API server cannot be found');
    const r = await runLbdns(['render-corefile', kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--api-int-seed', '127.0.0.1']);
    assert.is(r.code, 0, r.stderr);
    const seeded = logLines(r.stderr).find((l) => String(l.msg).startsWith('no Corefile serves api-int yet (a first boot)'));
    assert.equal([seeded?.address, seeded?.tlsServerName], ['127.0.0.1', `api-int.${DOMAIN}`]);
    assert.equal((await readAnswers(cluster.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`], 'the cluster was read, and its api-int served, not the seed');
  } finally {
    await cluster.close();
  }
});

test("a cloud node's first boot with the internal LB's host name as seed (an AWS NLB's): resolved through the upstreams, then the API server reached there", async () => {
  const cluster = await startCluster({ own: { sans: [`api-int.${DOMAIN}`] } });
  const upstream = await startDnsServer();
  try {
    upstream.set('internal-c1-int.elb.us-east-1.amazonaws.com', { A: ['127.0.0.1'] });
    const kubeconfig = await kubeletKubeconfig(cluster);
    const r = await runLbdns(['render-corefile', kubeconfig, '--out', cluster.out, '--upstream', upstream.address, '--wait-timeout', '10s', '--api-int-seed', 'internal-c1-int.elb.us-east-1.amazonaws.com']);
    assert.is(r.code, 0, r.stderr);
    assert.ok(upstream.queries('internal-c1-int.elb.us-east-1.amazonaws.com', 'A') >= 1, 'the seed was asked of the upstream');
    const seeded = logLines(r.stderr).find((l) => String(l.msg).startsWith('no Corefile serves api-int yet (a first boot)'));
    assert.equal([seeded?.address, seeded?.tlsServerName], ['127.0.0.1', `api-int.${DOMAIN}`]);
    assert.equal((await readAnswers(cluster.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
  } finally {
    await upstream.close();
    await cluster.close();
  }
});

test('a certificate that does not name api-int is refused even at the pinned address', async () => {
  // The shared server's certificate names 127.0.0.1 and localhost only.
  const cluster = await startCluster();
  try {
    await runLbdns(['render-corefile', '--domain', DOMAIN, '--api-lb', '10.0.0.10', '--api-int-lb', '127.0.0.1', '--ingress-lb', '10.0.1.30', '--upstream', UPSTREAM, '--out', cluster.out]);
    const kubeconfig = await kubeletKubeconfig(cluster);
    const r = await runLbdns(['render-corefile', kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '2s']);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /altnames|ERR_TLS_CERT_ALTNAME_INVALID|does not match/i);
  } finally {
    await cluster.close();
  }
});

test.run();
