/**
 * The monitoring manifests (manifests/monitoring/): the alerts are valid Prometheus rules
 * that fire on their symptom and only then (promtool from Debian's prometheus package), the
 * ServiceMonitor and PrometheusRule are what prometheus-operator's API accepts, the
 * ServiceMonitor reaches the monitor through the kube-rbac-proxy sidecar, and /metrics is
 * text Prometheus parses.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { dump, loadAll } from 'js-yaml';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { startCluster, startMonitor, until } from './support/cluster-fixture.js';
import { loadManifests, workloads, type Container } from './support/manifests.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MONITORING = join(ROOT, 'manifests/monitoring');
const run = promisify(execFile);
/** The docs as an alert's reader opens them: the repository package.json names, at main. */
const DOCS_URL = `${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { homepage: string }).homepage.replace(/#readme$/, '')}/blob/main/docs`;

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: Record<string, any>;
}

async function monitoringObjects(): Promise<KubeObject[]> {
  const files = (await readdir(MONITORING)).filter((f) => f.endsWith('.yaml')).sort();
  const texts = await Promise.all(files.map((f) => readFile(join(MONITORING, f), 'utf8')));
  return texts.flatMap((t) => loadAll(t) as KubeObject[]);
}

const only = async (kind: string): Promise<KubeObject> => {
  const found = (await monitoringObjects()).filter((o) => o.kind === kind);
  assert.is(found.length, 1, `one ${kind}`);
  return found[0]!;
};

/** promtool's own output when it fails, which names the rule and the expectation. */
async function promtool(args: string[], input?: string): Promise<{ code: number; out: string }> {
  const child = execFile('promtool', args, { cwd: ROOT });
  if (input !== undefined) child.stdin?.end(input);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    // close, not exit: after its output has been read whole.
    child.on('close', (c) => resolve(c ?? -1));
  });
  return { code, out };
}

/** The PrometheusRule's groups as a Prometheus rule file, with the promtool unit tests beside it. */
async function withRuleFiles(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-rules-'));
  try {
    await writeFile(join(dir, 'rules.yaml'), dump((await only('PrometheusRule')).spec));
    await copyFile(join(ROOT, 'test/fixtures/alerts.promtool.yaml'), join(dir, 'alerts.promtool.yaml'));
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const alertNames = async (): Promise<string[]> => ((await only('PrometheusRule')).spec.groups as { rules: { alert?: string }[] }[]).flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));

test('promtool check rules accepts the PrometheusRule groups', async () => {
  await withRuleFiles(async (dir) => {
    const r = await promtool(['check', 'rules', join(dir, 'rules.yaml')]);
    assert.is(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`SUCCESS: ${(await alertNames()).length} rules found`));
  });
});

test('promtool test rules: every alert fires on its symptom and stays silent without it', async () => {
  await withRuleFiles(async (dir) => {
    const r = await promtool(['test', 'rules', join(dir, 'alerts.promtool.yaml')]);
    assert.is(r.code, 0, r.out);
  });
});

test('every alert has a unit test expecting it to fire and a runbook section in docs/operations.md its runbook_url opens', async () => {
  const tests = loadAll(await readFile(join(ROOT, 'test/fixtures/alerts.promtool.yaml'), 'utf8'))[0] as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] };
  const readme = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
  const rules = ((await only('PrometheusRule')).spec.groups as { rules: { alert: string; annotations: Record<string, string> }[] }[]).flatMap((g) => g.rules);
  for (const rule of rules) {
    const cases = tests.tests.flatMap((t) => t.alert_rule_test).filter((c) => c.alertname === rule.alert);
    assert.ok(cases.some((c) => c.exp_alerts.length > 0), `${rule.alert}: a case where it fires`);
    assert.ok(cases.some((c) => c.exp_alerts.length === 0), `${rule.alert}: a case where it stays silent`);
    assert.is(rule.annotations.runbook_url, `${DOCS_URL}/operations.md#${rule.alert.toLowerCase()}`);
    assert.ok(readme.includes(`\n#### ${rule.alert}\n`), `docs/operations.md has a "#### ${rule.alert}" runbook section`);
  }
});

test("the ServiceMonitor and PrometheusRule pass prometheus-operator API schemas (generated from its Go API types, as its CRDs are)", async () => {
  new ServiceMonitor((await only('ServiceMonitor')) as never).validate();
  new PrometheusRule((await only('PrometheusRule')) as never).validate();
});

test('that schema check refuses what the CRDs refuse: a numeric port name, an unknown scheme', async () => {
  const monitor = await only('ServiceMonitor');
  const broken = (endpoint: object) => ({ ...monitor, spec: { ...monitor.spec, endpoints: [{ ...monitor.spec.endpoints[0], ...endpoint }] } });
  assert.throws(() => new ServiceMonitor(broken({ port: 18092 }) as never).validate(), /port must be string/);
  assert.throws(() => new ServiceMonitor(broken({ scheme: 'gopher' }) as never).validate(), /scheme must be equal to one of the allowed values/);
});

test('the ServiceMonitor scrapes the static pods through kube-rbac-proxy, which guards only /metrics of the monitor', async () => {
  const service = await only('Service');
  const monitor = await only('ServiceMonitor');
  const pod = workloads(loadManifests()).find((w) => w.manifest.file === 'static-pod-control-plane.yaml');
  assert.ok(pod);
  const labels = (pod.manifest.object.metadata as { labels?: Record<string, string> }).labels ?? {};
  for (const [k, v] of Object.entries(service.spec.selector as Record<string, string>)) assert.is(labels[k], v, `the Service selects the pod by ${k}`);
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) assert.is(service.metadata.labels?.[k], v, `the ServiceMonitor selects the Service by ${k}`);
  const endpoint = monitor.spec.endpoints[0] as { port: string; scheme: string; path: string; bearerTokenFile?: string };
  assert.equal([endpoint.scheme, endpoint.path], ['https', '/metrics']);
  assert.ok(endpoint.bearerTokenFile, 'Prometheus sends its token');
  const servicePort = (service.spec.ports as { name: string; targetPort: number }[]).find((p) => p.name === endpoint.port);
  assert.ok(servicePort, `the Service has port ${endpoint.port}`);

  const containers = pod.spec.containers as Container[];
  const proxy = containers.find((c) => c.name === 'kube-rbac-proxy');
  const lbdns = containers.find((c) => c.args?.[0] === 'watch-lb-status');
  assert.ok(proxy && lbdns);
  const arg = (c: Container, flag: string) => c.args?.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  assert.is(arg(proxy, '--secure-listen-address'), `0.0.0.0:${servicePort.targetPort}`);
  assert.is(arg(proxy, '--upstream'), `http://${arg(lbdns, '--metrics-addr')}/`);
  assert.is(arg(proxy, '--allow-paths'), '/metrics');
  assert.match(arg(lbdns, '--metrics-addr') ?? '', /^127\.0\.0\.1:/, 'the monitor itself listens on loopback only');
});

/** What a monitor of a fresh cluster exports once ready. */
async function readyMonitorMetrics(): Promise<string> {
  const cluster = await startCluster();
  const monitor = await startMonitor(cluster);
  try {
    await until('ready', async () => (await fetch(`http://${monitor.health}/readyz`)).status === 200, 10_000);
    return await (await fetch(`http://${monitor.health}/metrics`)).text();
  } finally {
    await monitor.stop();
    await cluster.close();
  }
}

test("the monitor's /metrics passes promtool check metrics, but for prom-client's own nodejs gauges named _total", async () => {
  const text = await readyMonitorMetrics();
  for (const name of ['lbdns_corefile_out_of_date', 'lbdns_lb_hostnames_unresolvable', 'lbdns_names_refused_total', 'lbdns_ready']) assert.ok(text.includes(`# TYPE ${name} `), name);
  assert.not.ok(text.includes('lbdns_infrastructure_status_in_sync'), "the monitor does not export update-infra-status's gauge");
  const r = await promtool(['check', 'metrics'], text);
  // prom-client's default metrics name three gauges lbdns_nodejs_active_*_total; lbdns cannot rename them.
  const lines = r.out.split('\n').filter((l) => l.trim() !== '');
  const problems = lines.filter((l) => !/^lbdns_nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/.test(l));
  assert.equal(problems, []);
  // promtool exits 3 for lint problems alone, 1 when it could not read the metrics.
  assert.is(r.code, lines.length > 0 ? 3 : 0, r.out);
});

test("the counters the alerts read with increase() are exported from 0 before their first count: a refused name and a watch restart", async () => {
  const text = await readyMonitorMetrics();
  assert.match(text, /^lbdns_names_refused_total\{source="dnsrecords",reason="outside-domain"\} 0$/m);
  assert.match(text, /^lbdns_watch_restarts_total\{source="nodes"\} 0$/m);
});

test('make test installs promtool: scripts/test-deps.sh asks for Debian\'s prometheus package', async () => {
  assert.match(await readFile(join(ROOT, 'scripts/test-deps.sh'), 'utf8'), /command -v promtool .*\|\| need\+=\(prometheus\)/);
  await run('promtool', ['--version']);
});

test.run();
