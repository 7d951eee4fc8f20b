import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APPS, API_INT_IP, API_IP, dnsRecord, DNSRECORD_NS, DOMAIN, INGRESS_IP, LB_CONFIG, readAnswers, startCluster, startFakeCluster, UPSTREAM, type ClusterFixture } from './support/cluster-fixture.js';
import type { RbacRule } from './support/apiserver.js';
import { logLines, runLbdns } from './support/run-cli.js';

async function withCluster(seed: Parameters<typeof startCluster>[0], body: (c: ClusterFixture) => Promise<void>): Promise<void> {
  const cluster = await startCluster(seed);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}

/** Runs `body` with the variables lbdns finds a kubeconfig through removed, restoring them afterwards. */
async function withoutKubeEnv<T>(body: () => Promise<T>): Promise<T> {
  const names = ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
  const saved = names.map((name) => [name, process.env[name]] as const);
  for (const name of names) delete process.env[name];
  try {
    return await body();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const exists = (path: string) => access(path).then(() => true, () => false);

test('render-corefile KUBECONFIG --out writes the Corefile the cluster describes', async () => {
  await withCluster({}, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, '');
    const answers = await readAnswers(c.out);
    assert.equal(answers?.names.get(`api.${DOMAIN}`), [`A ${API_IP}`]);
    assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_IP}`]);
    assert.equal(answers?.nodes.get('master-0'), ['10.0.0.5']);
    assert.equal(answers?.upstreams, [UPSTREAM]);
  });
});

test('--cluster with neither KUBECONFIG nor a pod service account exits 2 saying how to give a kubeconfig', async () => {
  await withCluster({}, async (c) => {
    const r = await withoutKubeEnv(() => runLbdns(['render-corefile', '--cluster', '--out', c.out, '--upstream', UPSTREAM]));
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, 'no kubeconfig: pass its path (as the argument or --kubeconfig), set KUBECONFIG, or run in a pod with a service account');
    assert.not.ok(await exists(c.out));
    assert.is((await c.server.requests()).length, 0, 'no request went anywhere, least of all to a default server');
  });
});

test('a kubeconfig file that is not a kubeconfig exits 2 naming the file', async () => {
  await withCluster({}, async (c) => {
    const broken = join(c.dir, 'broken-kubeconfig');
    await writeFile(broken, 'apiVersion: v1\nclusters: [ {name: test, cluster: {server: \n');
    const r = await runLbdns(['render-corefile', '--kubeconfig', broken, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `lbdns: error: kubeconfig ${broken}: is not YAML`);
    assert.not.ok(await exists(c.out));
  });
});

test('a kubeconfig whose server is plain http:// without insecure-skip-tls-verify exits 2 at once, saying to use https', async () => {
  await withCluster({}, async (c) => {
    const plain = join(c.dir, 'plain-http-kubeconfig');
    const https = c.server.url;
    const http = https.replace(/^https:/, 'http:');
    await writeFile(plain, (await readFile(c.kubeconfig, 'utf8')).replace(https, http));
    const start = Date.now();
    const r = await runLbdns(['render-corefile', '--kubeconfig', plain, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '30s']);
    const elapsed = Date.now() - start;
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `lbdns: error: kubeconfig ${plain}: cluster "test" server "${http}" is plain HTTP`);
    assert.match(r.stderr, 'insecure-skip-tls-verify: true');
    assert.match(r.stderr, 'https://');
    assert.ok(elapsed < 3000, `failed after ${elapsed} ms rather than at once`);
    assert.is((await c.server.requests()).length, 0);
    assert.not.ok(await exists(c.out));
  });
});

const INFRA = { resource: 'infrastructures', name: 'cluster' } as const;
/** A cluster on platform None: no cloud LB sources. */
const PLATFORM_NONE = { platformStatus: { type: 'None' } };

test('on a platform without cluster API LB sources (None), no --api-int-lb nor --lb-config exits 2 at once naming the platform and the flags', async () => {
  await withCluster(PLATFORM_NONE, async (c) => {
    const start = Date.now();
    const r = await runLbdns(['render-corefile', '--kubeconfig', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '30s']);
    const elapsed = Date.now() - start;
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, 'lbdns: error: infrastructures.config.openshift.io/cluster: platform "None"');
    assert.match(r.stderr, '--api-int-lb');
    assert.match(r.stderr, '--lb-config');
    assert.ok(elapsed < 3000, `failed after ${elapsed} ms rather than at once`);
    assert.not.ok(await exists(c.out));
  });
});

test('on a platform without cluster API LB sources, --api-int-lb is enough: ingress still comes from the router Service', async () => {
  await withCluster(PLATFORM_NONE, async (c) => {
    const r = await runLbdns(['render-corefile', '--kubeconfig', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--api-int-lb', '10.0.9.20', '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal(answers?.names.get(`api-int.${DOMAIN}`), ['A 10.0.9.20']);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_IP}`]);
    const noLbConfig = logLines(r.stderr).find((l) => String(l.msg).startsWith('no LB config ConfigMap for this platform'));
    assert.is(noLbConfig?.platform, 'None');
  });
});

test('on a platform without cluster API LB sources, --lb-config names where the API LBs are', async () => {
  await withCluster(PLATFORM_NONE, async (c) => {
    const r = await runLbdns(['render-corefile', '--kubeconfig', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--lb-config', `${LB_CONFIG.namespace}/${LB_CONFIG.name}`, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
  });
});

test("*.apps follows the router Service, not the Infrastructure status's copy of its old IP", async () => {
  await withCluster({}, async (c) => {
    await c.server.patchStatus(INFRA, { platformStatus: { aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: { ingressLoadBalancerIPs: ['10.0.1.29'] } } } } });
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(APPS), [`A ${INGRESS_IP}`]);
  });
});

test('api-int named by the LB config is served from it alone: a stale Infrastructure status address is not served, and the disagreement is logged once', async () => {
  await withCluster({}, async (c) => {
    await c.server.patchStatus(INFRA, { platformStatus: { aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: { apiIntLoadBalancerIPs: ['10.9.9.9'] } } } } });
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
    const warned = logLines(r.stderr).filter((l) => l.level === 'warn' && String(l.msg).startsWith('the Infrastructure status publishes other addresses'));
    assert.equal(warned.map((l) => [l.lb, l.served, l.published]), [['api-int', [API_INT_IP], ['10.9.9.9']]]);
  });
});

test('api-int that nothing else names is served from the Infrastructure status lists (IP-only clusters)', async () => {
  await withCluster({}, async (c) => {
    await c.server.patchStatus(INFRA, { platformStatus: { aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: { apiIntLoadBalancerIPs: ['10.9.9.9'] } } } } });
    await c.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': null } });
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), ['A 10.9.9.9']);
    assert.not.ok(logLines(r.stderr).some((l) => String(l.msg).startsWith('the Infrastructure status publishes other addresses')));
  });
});

test('the default ingress DNSRecord for *.apps does not add to the router Service address', async () => {
  await withCluster({}, async (c) => {
    await c.server.create(dnsRecord('default-wildcard', { dnsName: `${APPS}.`, targets: ['10.0.1.99'] }));
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(APPS), [`A ${INGRESS_IP}`]);
  });
});

test('a DNSRecord outside the cluster domain or for api-int is not served, with a warning', async () => {
  await withCluster({}, async (c) => {
    await c.server.create(dnsRecord('hijack', { dnsName: 'www.google.com.', targets: ['10.0.1.99'] }));
    await c.server.create(dnsRecord('api-int', { dnsName: `api-int.${DOMAIN}.`, targets: ['10.0.1.98'] }));
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.not.ok(answers?.names.has('www.google.com'));
    assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_INT_IP}`]);
    const warnings = logLines(r.stderr).filter((l) => l.level === 'warn').map((l) => String(l.msg));
    assert.ok(warnings.some((m) => m.includes(`${DNSRECORD_NS}/hijack spec.dnsName`) && m.includes('outside the cluster domain')), warnings.join('\n'));
    assert.ok(warnings.some((m) => m.includes(`${DNSRECORD_NS}/api-int spec.dnsName`) && m.includes("API names")), warnings.join('\n'));
  });
});

test("a DNSRecord for a node's name is not served, the node answering it, and the log says why", async () => {
  await withCluster({}, async (c) => {
    await c.server.create(dnsRecord('node-name', { dnsName: `master-0.${DOMAIN}.`, targets: ['10.0.1.99'] }));
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.not.ok(answers?.names.has(`master-0.${DOMAIN}`));
    assert.equal(answers?.nodes.get('master-0'), ['10.0.0.5']);
    const lines = logLines(r.stderr).map((l) => String(l.msg));
    assert.ok(lines.includes(`master-0.${DOMAIN}: not served for dnsrecord/${DNSRECORD_NS}/node-name: it is the name of node master-0, which its hosts entry answers`), lines.join('\n'));
  });
});

const ALL_BUT_SERVICES: RbacRule[] = [
  { verbs: ['get', 'list', 'watch'], apiGroups: ['config.openshift.io'], resources: ['infrastructures', 'dnses'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps', 'nodes'] },
  { verbs: ['get', 'list', 'watch'], apiGroups: ['ingress.operator.openshift.io'], resources: ['dnsrecords'] },
];

test('render-corefile without the right to list services exits 2 at once, naming the resource', async () => {
  await withCluster({ rules: ALL_BUT_SERVICES }, async (c) => {
    const start = Date.now();
    const r = await runLbdns(['render-corefile', '--kubeconfig', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '30s']);
    const elapsed = Date.now() - start;
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /lbdns: error: list services in openshift-ingress: forbidden \(.*cannot list resource "services"/);
    assert.ok(elapsed < 3000, `failed after ${elapsed} ms rather than at once`);
    assert.not.ok(await exists(c.out));
  });
});

test('render-corefile with the router Service missing exits 1 after --wait-timeout naming the missing name, writing nothing', async () => {
  await withCluster({ ingress: null }, async (c) => {
    const start = Date.now();
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '2s']);
    const elapsed = Date.now() - start;
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, `lbdns: error: after 2s still missing: ${APPS} has no address`);
    assert.ok(elapsed >= 2000 && elapsed < 4000, `gave up after ${elapsed} ms`);
    assert.not.ok(await exists(c.out));
  });
});

test('display --kubeconfig lists Unmanaged DNSRecords as unmanaged and serves only the Managed ones', async () => {
  await withCluster({}, async (c) => {
    await c.server.create(dnsRecord('apps2', { dnsName: `*.apps2.${DOMAIN}.`, targets: ['10.0.2.40'], dnsManagementPolicy: 'Unmanaged' }));
    await c.server.create(dnsRecord('apps3', { dnsName: `*.apps3.${DOMAIN}.`, targets: ['10.0.3.40'] }));
    const r = await runLbdns(['display', '--kubeconfig', c.kubeconfig, '--upstream', UPSTREAM]);
    assert.is(r.code, 0, r.stderr);
    const view = JSON.parse(r.stdout) as { unmanaged: unknown[]; recordSet: { names: { name: string; v4: string[] }[] } };
    assert.equal(view.unmanaged, [{ name: `*.apps2.${DOMAIN}`, source: 'dnsrecord/openshift-ingress-operator/apps2', targets: [{ kind: 'ip', ip: '10.0.2.40' }], ttl: 30 }]);
    const names = view.recordSet.names.map((n) => n.name);
    assert.not.ok(names.includes(`*.apps2.${DOMAIN}`));
    assert.equal(view.recordSet.names.find((n) => n.name === `*.apps3.${DOMAIN}`)?.v4, ['10.0.3.40']);
  });
});

test('render-corefile serves a Managed DNSRecord at its recordTTL', async () => {
  await withCluster({}, async (c) => {
    await c.server.create(dnsRecord('apps3', { dnsName: `*.apps3.${DOMAIN}.`, targets: ['10.0.3.40'], recordTTL: 120 }));
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const corefile = await readFile(c.out, 'utf8');
    assert.ok(corefile.includes('answer "{{ .Name }} 120 IN A 10.0.3.40"'), corefile);
    assert.ok(corefile.includes(`answer "{{ .Name }} 60 IN A ${INGRESS_IP}"`), 'the LB names keep the cluster TTL');
  });
});

/** A cluster whose DNS is the cloud's: the Infrastructure says so from install on (the field cannot change). */
const PLATFORM_DEFAULT = { platformStatus: { type: 'AWS', aws: { region: 'us-east-1', cloudLoadBalancerConfig: { dnsType: 'PlatformDefault' } } } };

for (const command of ['render-corefile', 'display'] as const) {
  test(`${command} on a cluster whose DNS is the cloud's (dnsType PlatformDefault) exits 2 naming the field, writing nothing`, async () => {
    await withCluster(PLATFORM_DEFAULT, async (c) => {
      const out = command === 'render-corefile' ? ['--out', c.out] : [];
      const r = await runLbdns([command, c.kubeconfig, ...out, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
      assert.is(r.code, 2, r.stderr);
      assert.match(r.stderr, /status\.platformStatus\.aws\.cloudLoadBalancerConfig\.dnsType is "PlatformDefault": this cluster's names are the cloud DNS's/);
      assert.match(r.stderr, /Pass --ignore-dns-type/);
      assert.not.ok(await exists(c.out));
    });
  });
}

test('watch-lb-status on a PlatformDefault cluster exits 2 at start, naming the field', async () => {
  await withCluster(PLATFORM_DEFAULT, async (c) => {
    const r = await runLbdns(['watch-lb-status', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--metrics-addr', '127.0.0.1:0']);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /cloudLoadBalancerConfig\.dnsType is "PlatformDefault"/);
    assert.not.ok(await exists(c.out));
  });
});

test('watch-lb-status with a --dns-server that is no address exits 2 at start, naming it', async () => {
  await withCluster({}, async (c) => {
    const r = await runLbdns(['watch-lb-status', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--metrics-addr', '127.0.0.1:0', '--dns-server', 'dns.example.net']);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /--dns-server: "dns\.example\.net"/);
    assert.not.ok(await exists(c.out));
  });
});

test('--ignore-dns-type serves a PlatformDefault cluster anyway, with a warning', async () => {
  await withCluster(PLATFORM_DEFAULT, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--ignore-dns-type']);
    assert.is(r.code, 0, r.stderr);
    assert.ok(logLines(r.stderr).some((l) => l.level === 'warn' && String(l.msg).includes('is "PlatformDefault": served anyway (--ignore-dns-type)')));
    assert.ok(await exists(c.out));
  });
});

test('a cluster whose DNS switch is not set is served only when the admin says so; display says what the switch says', async () => {
  // No aws section at all: the CRD's default for cloudLoadBalancerConfig applies only inside one.
  await withCluster({ platformStatus: { type: 'AWS' } }, async (c) => {
    const refused = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /cloudLoadBalancerConfig\.dnsType is not set .*: this cluster's names are the cloud DNS's .* Pass --ignore-dns-type/);
    assert.not.ok(await exists(c.out));
    const absent = await runLbdns(['display', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--ignore-dns-type']);
    assert.is(absent.code, 0, absent.stderr);
    assert.match((JSON.parse(absent.stdout) as { dnsType: string }).dnsType, /dnsType is not set .*: served anyway \(--ignore-dns-type\)/);
    await c.server.patchStatus(INFRA, { platformStatus: { aws: { region: 'us-east-1', cloudLoadBalancerConfig: { dnsType: 'ClusterHosted' } } } });
    const hosted = await runLbdns(['display', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is((JSON.parse(hosted.stdout) as { dnsType: string }).dnsType, 'status.platformStatus.aws.cloudLoadBalancerConfig.dnsType: ClusterHosted');
  });
});

test('print-records reads a PlatformDefault cluster: it serves no names', async () => {
  await withCluster(PLATFORM_DEFAULT, async (c) => {
    const r = await runLbdns(['print-records', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
  });
});

test('render-corefile writes its Corefile from the lists even when the API server (or a proxy) takes every watch and never answers it', async () => {
  const cluster = await startFakeCluster();
  try {
    cluster.server.failNext({ verb: 'watch' }, 'unanswered', 1000);
    const started = Date.now();
    const r = await runLbdns(['render-corefile', cluster.kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, '--wait-timeout', '20s']);
    assert.is(r.code, 0, r.stderr);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.ok((await readAnswers(cluster.out))?.names.has(APPS));
  } finally {
    await cluster.close();
  }
});

test.run();
