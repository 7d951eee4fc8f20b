/**
 * The RBAC in manifests/ against the calls lbdns really makes, found by running it: each
 * command a shipped manifest runs, with that manifest's args, against the real kube-apiserver
 * holding the manifests' Roles and bindings, as that container's identity (a kubelet, a
 * ServiceAccount). The server's own RBAC refuses a call without a rule (403); its audit log
 * says what each identity asked, so a rule no call uses fails too: the grants are exactly the calls.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../cmd/cli.js';
import { ClusterCommand } from '../cmd/options.js';
import { API_IP, dnsRecord, DOMAIN, LB_CONFIG, ROUTER, startCluster, until, UPSTREAM, type ClusterFixture } from './support/cluster-fixture.js';
import { dnsPolicy, gateway, NS, ZONE } from './support/gateway-fixture.js';
import { HNS, hostedNetServices, startOnPrem } from './support/on-prem-fixture.js';
import { IDENTITIES, type ApiServer, type AuditedRequest } from './support/apiserver.js';
import { rulesAllow, type KubeObject, type RequestAttributes, type Verb } from './support/kube-api-server.js';
import {
  allRules,
  atomsOf,
  describe,
  lbdnsContainers,
  loadManifests,
  mountOf,
  nodeSubjects,
  rbacObjects,
  rulesFor,
  serviceAccountSubjects,
  workloads,
  type ContainerRef,
  type GrantedRule,
  type ManifestPlatform,
  type Workload,
} from './support/manifests.js';
import { logLines, runLbdns } from './support/run-cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NEW_INGRESS_IP = '10.0.1.99';
const NEW_API_IP = '10.0.0.99';
const REFUSED_RECORD = { resource: 'dnsrecords', namespace: 'openshift-ingress-operator', name: 'tenant-outside' } as const;
const NODE_USER = 'system:node:master-0';

const manifests = loadManifests();
const pods = workloads(manifests);
const lbdns = lbdnsContainers(pods);
const staticPodContainers = lbdns.filter((ref) => ref.workload.manifest.object.kind === 'Pod');
const updater = lbdns.filter((ref) => ref.workload.manifest.object.kind === 'Deployment');

/** One request as RBAC saw it, from the audit log. */
interface Request {
  readonly uri: string;
  readonly status: number;
  readonly attributes: RequestAttributes;
}

/** What one command did: how it ended, what it logged, and every request the API server answered for it. */
interface Outcome {
  readonly label: string;
  readonly code: number;
  readonly stderr: string;
  readonly requests: readonly Request[];
}

function requestOf(r: AuditedRequest): Request {
  const attributes: RequestAttributes =
    r.resource === undefined
      ? { resourceRequest: false, verb: r.verb, path: r.uri }
      : { resourceRequest: true, verb: r.verb as Verb, apiGroup: r.apiGroup ?? '', apiVersion: '', resource: r.resource, subresource: r.subresource ?? '', namespace: r.namespace ?? '', name: r.name ?? '', path: r.uri };
  return { uri: r.uri, status: r.status, attributes };
}

/** What `user` asked since the last clearRequests(). */
const requestsOf = async (server: ApiServer, user: string): Promise<Request[]> => (await server.requests(user)).map(requestOf);

/**
 * The args as the container would run them, with each path moved to where its volume lies in
 * `root` (so containers of one pod share their emptyDir, as they do on a node), and the
 * listen address moved to a free loopback port.
 */
async function mountedArgs(ref: ContainerRef, root: string): Promise<string[]> {
  const hostPaths = new Map<string, string>();
  for (const volume of ref.workload.spec.volumes ?? []) {
    const path = join(root, volume.name);
    await mkdir(volume.hostPath?.type === 'File' ? root : path, { recursive: true });
    hostPaths.set(volume.name, path);
  }
  const onHost = (path: string): string => {
    const mounted = mountOf(ref.container, path);
    const base = mounted && hostPaths.get(mounted.mount.name);
    return mounted && base ? join(base, mounted.relative) : path;
  };
  const args = ref.container.args ?? [];
  return args.map((arg, i) => {
    if (arg.startsWith('--metrics-addr=') || args[i - 1] === '--metrics-addr') return arg.startsWith('--') ? '--metrics-addr=127.0.0.1:0' : '127.0.0.1:0';
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && arg[eq + 1] === '/') return `${arg.slice(0, eq + 1)}${onHost(arg.slice(eq + 1))}`;
    return arg.startsWith('/') ? onHost(arg) : arg;
  });
}

/** The container's environment as the kubelet sets it for a static pod's mirror on `node`: downward-API fields resolved. */
function downwardEnv(ref: ContainerRef, node: string): Record<string, string> {
  const meta = ref.workload.manifest.object.metadata ?? {};
  const fields: Record<string, string> = { 'metadata.name': `${meta.name ?? ''}-${node}`, 'metadata.namespace': meta.namespace ?? '', 'spec.nodeName': node };
  return Object.fromEntries(
    (ref.container.env ?? []).map((e) => {
      const path = e.valueFrom?.fieldRef?.fieldPath;
      const value = path === undefined ? e.value : fields[path];
      if (value === undefined) throw new Error(`${ref.container.name}: env ${e.name} comes from ${path ?? 'nowhere'}, which this test does not resolve`);
      return [e.name, value];
    }),
  );
}

/** Puts the files a node would have where the args read them: the kubeconfig, and a resolv.conf. */
async function provideFiles(args: readonly string[], kubeconfig: string): Promise<void> {
  const command = buildCli(args).process([...args]);
  if (!(command instanceof ClusterCommand)) throw new Error(`${JSON.stringify(args)} does not run an lbdns command`);
  const kubeconfigPath = command.kubeconfig ?? command.kubeconfigArg;
  if (kubeconfigPath !== undefined) await writeFile(kubeconfigPath, await readFile(kubeconfig, 'utf8'));
  if (command.resolvConf !== undefined) {
    await mkdir(dirname(command.resolvConf), { recursive: true });
    await writeFile(command.resolvConf, `nameserver ${UPSTREAM}\n`);
  }
}

const PLATFORM_TYPES: Readonly<Record<ManifestPlatform, string>> = { aws: 'AWS', gcp: 'GCP', azure: 'Azure' };

/**
 * The cluster the manifests are for, on the real server: installed on `platform` (default
 * AWS) with ClusterHosted DNS (the newest Infrastructure CRD, which gives Azure the field
 * too), its DNS config, the installer's LB ConfigMap, router Service, a node
 * and DNSRecords; lbdns is `user`, holding what the manifests bind to it.
 */
async function seededCluster(user: string, platform: ManifestPlatform = 'aws', extra: readonly KubeObject[] = []): Promise<ClusterFixture> {
  assert.ok(IDENTITIES[user], `${user} is an identity the test server knows`);
  const type = PLATFORM_TYPES[platform];
  return startCluster(
    { platformStatus: { type, [platform]: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted' } } } as never, infrastructureCrd: 'main', as: { user, rbac: rbacObjects(loadManifests(platform)) } },
    [
      { apiVersion: 'config.openshift.io/v1', kind: 'DNS', metadata: { name: 'cluster' }, spec: { baseDomain: DOMAIN } },
      dnsRecord('default-wildcard-extra', { dnsName: `*.extra.${DOMAIN}.`, targets: ['10.0.4.40'] }),
      // A tenant's record for a name outside the cluster: refused, and reported as an Event.
      dnsRecord(REFUSED_RECORD.name, { dnsName: 'www.example.org.', targets: ['10.0.4.41'] }),
      ...extra,
    ],
  );
}

/** A command that runs until SIGTERM, as its own process, with its structured log at hand. */
interface Daemon {
  logs(): Record<string, unknown>[];
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

function startDaemon(args: readonly string[], env: NodeJS.ProcessEnv): Daemon {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'cmd/lbdns.ts'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return {
    logs: () => logLines(stderr),
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs `daemon` until `ready` holds, makes `change`, waits until `followed` holds, then stops it. */
async function exercise(daemon: Daemon, steps: { ready: () => boolean | Promise<boolean>; change: () => Promise<unknown>; followed: () => boolean | Promise<boolean> }): Promise<number> {
  try {
    await until('ready', steps.ready, 20_000);
    await steps.change();
    await until('the change followed', steps.followed, 20_000);
  } catch (err) {
    await daemon.stop();
    throw new Error(`${(err as Error).message}; its log:\n${daemon.stderr()}`);
  }
  return daemon.stop();
}

async function readyzOk(logs: Record<string, unknown>[]): Promise<boolean> {
  const health = logs.find((l) => l.msg === 'watching')?.health;
  if (typeof health !== 'string') return false;
  const res = await fetch(`http://${health}/readyz`).catch(() => undefined);
  return res?.status === 200;
}

/** Runs a one-shot command line in-process as `user` against `cluster`; `env` is set only while it runs. */
async function runOnce(label: string, cluster: { readonly server: ApiServer }, user: string, args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  await cluster.server.clearRequests();
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const r = await runLbdns(args);
    return { label, code: r.code, stderr: r.stderr, requests: await requestsOf(cluster.server, user) };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function refIn(workload: Workload, init: boolean): ContainerRef {
  const found = staticPodContainers.filter((r) => r.workload === workload && r.init === init);
  assert.is(found.length, 1, `${workload.label}: one lbdns ${init ? 'initContainer' : 'container'}`);
  return found[0] as ContainerRef;
}

function assertNoRefusal(outcomes: readonly Outcome[]): void {
  for (const o of outcomes) {
    assert.is(o.code, 0, `${o.label} exited ${o.code}:\n${o.stderr}`);
    const refused = o.requests.filter((r) => r.status === 403).map((r) => `${r.attributes.verb} ${r.uri}`);
    assert.equal(refused, [], `${o.label}: calls its RBAC does not grant`);
    assert.ok(o.requests.length > 0, `${o.label} made calls`);
  }
}

function assertAllGranted(outcomes: readonly Outcome[], rules: readonly GrantedRule[]): void {
  for (const o of outcomes) {
    for (const r of o.requests) {
      assert.ok(r.attributes.resourceRequest, `${o.label}: ${r.attributes.verb} ${r.uri} is not a resource request`);
      assert.ok(rulesAllow(rules, r.attributes), `${o.label}: ${r.attributes.verb} ${r.uri} is granted by no rule`);
    }
  }
}

function assertEveryGrantUsed(outcomes: readonly Outcome[], rules: readonly GrantedRule[]): void {
  const requests = outcomes.flatMap((o) => o.requests);
  const unused = rules.flatMap(atomsOf).filter((atom) => !requests.some((r) => rulesAllow([atom], r.attributes)));
  const show = (a: GrantedRule) =>
    `${a.verbs[0]} ${a.resources?.[0]}${a.apiGroups?.[0] ? `.${a.apiGroups[0]}` : ''}${a.resourceNames ? ` ${a.resourceNames[0]}` : ''}${a.namespace ? ` in ${a.namespace}` : ''} (${a.origin})`;
  assert.equal(unused.map(show), [], 'grants no call uses');
}

/** A suite's setup failure, kept for its tests to report: uvu drops an error thrown in a hook without a word. */
interface Setup {
  error?: unknown;
}

function capture(setup: Setup, body: () => Promise<void>): () => Promise<void> {
  return () =>
    body().catch((err: unknown) => {
      setup.error = err;
    });
}

function setupSucceeded(setup: Setup): void {
  if (setup.error !== undefined) throw setup.error;
}

// ---------------------------------------------------------------------------------------

const staticSetup: Setup = {};
const StaticPods = suite('static pods: rbac.yaml for system:nodes');
const nodeRules = rulesFor(manifests, nodeSubjects('master-0'));
const staticOutcomes: Outcome[] = [];
/** Temp dirs standing in for nodes' and pods' volumes, removed after each suite. */
const tempDirs: string[] = [];

StaticPods.before(capture(staticSetup, async () => {
  const controlPlane = pods.find((w) => w.manifest.file === 'static-pod-control-plane.yaml');
  const bootstrap = pods.find((w) => w.manifest.file === 'static-pod-bootstrap.yaml');
  assert.ok(controlPlane && bootstrap);

  const cluster = await seededCluster(NODE_USER);
  try {
    const node = await mkdtemp(join(tmpdir(), 'lbdns-rbac-node-'));
    tempDirs.push(node);
    const init = await mountedArgs(refIn(controlPlane, true), node);
    await provideFiles(init, cluster.kubeconfig);
    staticOutcomes.push(await runOnce('control-plane initContainer render-corefile', cluster, NODE_USER, init));

    // What docs/operations.md tells an admin to run on a node when a name does not resolve.
    // render-corefile's own options (where to write, what to do without the API) are not display's.
    const display = ['display', ...init.slice(1).filter((a) => !a.startsWith('--out=') && !a.startsWith('--if-unreachable='))];
    staticOutcomes.push(await runOnce('display with the kubelet kubeconfig', cluster, NODE_USER, display));

    const monitorArgs = await mountedArgs(refIn(controlPlane, false), node);
    const corefile = monitorArgs.find((a) => a.startsWith('--out='))?.slice('--out='.length);
    assert.ok(corefile, 'the monitor writes --out=FILE');
    await cluster.server.clearRequests();
    const monitor = startDaemon(monitorArgs, { PATH: process.env.PATH, ...downwardEnv(refIn(controlPlane, false), 'master-0') });
    const code = await exercise(monitor, {
      ready: async () => (await readyzOk(monitor.logs())) && (await cluster.server.list('events', 'openshift-lbdns')).length > 0,
      change: async () => {
        await cluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: NEW_INGRESS_IP }] } });
        // Seen again: its Event's count is patched.
        await cluster.server.mergePatch(REFUSED_RECORD, { metadata: { labels: { touched: 'yes' } } });
      },
      followed: async () => (await readFile(corefile, 'utf8')).includes(NEW_INGRESS_IP),
    });
    staticOutcomes.push({ label: 'control-plane monitor watch-lb-status', code, stderr: monitor.stderr(), requests: await requestsOf(cluster.server, NODE_USER) });
  } finally {
    await cluster.close();
  }

  // With Gateway DNS (rbac-gateway-dns.yaml): the monitor also lists and watches the Gateway DNS
  // kinds and the kube-system Namespace, and writes an Event on a DNSPolicy that cannot apply.
  const badPolicy = dnsPolicy('bad', { gateway: 'gw' }, { excludeAddresses: ['10.0.0.0/33'] });
  const gatewayCluster = await seededCluster(NODE_USER, 'aws', [gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }], [{ value: '192.0.2.10' }]), badPolicy]);
  try {
    const node = await mkdtemp(join(tmpdir(), 'lbdns-rbac-gateway-'));
    tempDirs.push(node);
    const monitorArgs = [...(await mountedArgs(refIn(controlPlane, false), node)), `--gateway-zone=${ZONE}`];
    await provideFiles(monitorArgs, gatewayCluster.kubeconfig);
    const corefile = monitorArgs.find((a) => a.startsWith('--out='))?.slice('--out='.length) ?? '';
    await gatewayCluster.server.clearRequests();
    const monitor = startDaemon(monitorArgs, { PATH: process.env.PATH, ...downwardEnv(refIn(controlPlane, false), 'master-0') });
    const code = await exercise(monitor, {
      ready: async () => (await readyzOk(monitor.logs())) && (await gatewayCluster.server.list('events', NS)).length > 0,
      change: async () => {
        await gatewayCluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: NEW_INGRESS_IP }] } });
        // Seen again: the policy's Event count is patched.
        await gatewayCluster.server.mergePatch({ resource: 'dnspolicies', namespace: NS, name: 'bad' }, { metadata: { labels: { touched: 'yes' } } });
      },
      followed: async () => (await readFile(corefile, 'utf8').catch(() => '')).includes(NEW_INGRESS_IP),
    });
    staticOutcomes.push({ label: 'control-plane monitor watch-lb-status --gateway-zone', code, stderr: monitor.stderr(), requests: await requestsOf(gatewayCluster.server, NODE_USER) });
  } finally {
    await gatewayCluster.close();
  }

  const bootCluster = await seededCluster('system:node:bootstrap');
  try {
    const node = await mkdtemp(join(tmpdir(), 'lbdns-rbac-bootstrap-'));
    tempDirs.push(node);
    const init = await mountedArgs(refIn(bootstrap, true), node);
    await provideFiles(init, bootCluster.kubeconfig);
    staticOutcomes.push(await runOnce('bootstrap initContainer render-corefile', bootCluster, 'system:node:bootstrap', init));
    // The monitor follows the ingress LB, which appears while bootstrap runs.
    const monitorArgs = await mountedArgs(refIn(bootstrap, false), node);
    const corefile = monitorArgs.find((a) => a.startsWith('--out='))?.slice('--out='.length) ?? '';
    await bootCluster.server.clearRequests();
    const monitor = startDaemon(monitorArgs, { PATH: process.env.PATH, ...downwardEnv(refIn(bootstrap, false), 'bootstrap') });
    const code = await exercise(monitor, {
      ready: () => readyzOk(monitor.logs()),
      change: () => bootCluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: NEW_INGRESS_IP }] } }),
      followed: async () => (await readFile(corefile, 'utf8')).includes(NEW_INGRESS_IP),
    });
    staticOutcomes.push({ label: 'bootstrap monitor watch-lb-status', code, stderr: monitor.stderr(), requests: await requestsOf(bootCluster.server, 'system:node:bootstrap') });
  } finally {
    await bootCluster.close();
  }

  // On-prem, the same pod also reads the HostedNetServices switches.
  // Its API VIP is 127.0.0.1, an address of this machine: the monitor records itself as the VIP's owner.
  const onPrem = await startOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: ['192.168.111.4'] }, as: { user: NODE_USER, rbac: rbacObjects(manifests) } });
  try {
    await onPrem.server.create(hostedNetServices({}));
    const node = await mkdtemp(join(tmpdir(), 'lbdns-rbac-onprem-'));
    tempDirs.push(node);
    const init = await mountedArgs(refIn(controlPlane, true), node);
    await provideFiles(init, onPrem.kubeconfig);
    staticOutcomes.push(await runOnce('on-prem control-plane initContainer render-corefile', onPrem, NODE_USER, init));
    const monitorArgs = await mountedArgs(refIn(controlPlane, false), node);
    const corefile = monitorArgs.find((a) => a.startsWith('--out='))?.slice('--out='.length) ?? '';
    await onPrem.server.clearRequests();
    const monitor = startDaemon(monitorArgs, { PATH: process.env.PATH, NODE_NAME: 'master-0' });
    const code = await exercise(monitor, {
      ready: async () => (await readyzOk(monitor.logs())) && monitor.logs().some((l) => l.msg === 'HostedNetServices status updated'),
      change: () => onPrem.server.mergePatch(HNS, { spec: { dns: { appsResolution: 'Disabled' } } }),
      followed: async () => !(await readFile(corefile, 'utf8')).includes('*.apps.'),
    });
    staticOutcomes.push({ label: 'on-prem control-plane monitor watch-lb-status', code, stderr: monitor.stderr(), requests: await requestsOf(onPrem.server, NODE_USER) });
  } finally {
    await onPrem.close();
  }
}));

StaticPods.after(async () => {
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

StaticPods('every command the static pods run, and display, succeeds without one call refused', () => {
  setupSucceeded(staticSetup);
  assert.equal(
    staticOutcomes.map((o) => o.label),
    [
      'control-plane initContainer render-corefile',
      'display with the kubelet kubeconfig',
      'control-plane monitor watch-lb-status',
      'control-plane monitor watch-lb-status --gateway-zone',
      'bootstrap initContainer render-corefile',
      'bootstrap monitor watch-lb-status',
      'on-prem control-plane initContainer render-corefile',
      'on-prem control-plane monitor watch-lb-status',
    ],
  );
  assertNoRefusal(staticOutcomes);
});

StaticPods('every call they make is granted by a rule bound to system:nodes', () => {
  setupSucceeded(staticSetup);
  assertAllGranted(staticOutcomes, nodeRules);
});

StaticPods('every grant to system:nodes is used by some call: nothing beyond what the code does', () => {
  setupSucceeded(staticSetup);
  assertEveryGrantUsed(staticOutcomes, nodeRules);
});

StaticPods('the grants to system:nodes only read, but for creating Events and patching their count, and patching the HostedNetServices status', () => {
  for (const rule of nodeRules) {
    const only = (group: string, resource: string) => rule.apiGroups?.length === 1 && rule.apiGroups[0] === group && rule.resources?.length === 1 && rule.resources[0] === resource;
    const allowed = only('', 'events') ? ['create', 'patch'] : only('lbdns.io', 'hostednetservices/status') ? ['patch'] : ['get', 'list', 'watch'];
    for (const verb of rule.verbs) assert.ok(allowed.includes(verb), `${rule.origin}: ${verb}`);
  }
});

StaticPods.run();

// ---------------------------------------------------------------------------------------

const updaterSetup: Setup = {};
const Updater = suite('update-infra-status Deployment: its ServiceAccount');
const deployment = updater[0];
const account = deployment && { namespace: deployment.workload.namespace ?? '', name: deployment.workload.spec.serviceAccountName ?? '' };
const accountRules = account ? rulesFor(manifests, serviceAccountSubjects(account.namespace, account.name)) : [];
const updaterOutcomes: Outcome[] = [];

const clusterHosted = async (cluster: ClusterFixture): Promise<{ apiLoadBalancerIPs?: string[] } | undefined> =>
  (await cluster.server.get<{ status?: { platformStatus?: { aws?: { cloudLoadBalancerConfig?: { clusterHosted?: { apiLoadBalancerIPs?: string[] } } } } } }>({ resource: 'infrastructures', name: 'cluster' }))
    ?.status?.platformStatus?.aws?.cloudLoadBalancerConfig?.clusterHosted;

Updater.before(capture(updaterSetup, async () => {
  assert.is(updater.length, 1, 'one update-infra-status container');
  assert.ok(deployment && account?.name && account.namespace, 'the Deployment runs as a ServiceAccount in its namespace');
  const user = `system:serviceaccount:${account.namespace}:${account.name}`;
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-rbac-pod-'));
  tempDirs.push(dir);
  const args = await mountedArgs(deployment, dir);
  const oneShot = args.filter((a) => a !== '--watch');
  assert.not.equal(oneShot, args, 'the Deployment runs --watch');

  const cluster = await seededCluster(user);
  try {
    const outcome = await runOnce('update-infra-status (one-shot)', cluster, user, oneShot, { KUBECONFIG: cluster.kubeconfig });
    updaterOutcomes.push(outcome);
    assert.equal((await clusterHosted(cluster))?.apiLoadBalancerIPs, [API_IP], `the one-shot run published the api LB; it exited ${outcome.code}:\n${outcome.stderr}`);
  } finally {
    await cluster.close();
  }

  const watched = await seededCluster(user);
  try {
    const daemon = startDaemon(args, { PATH: process.env.PATH, KUBECONFIG: watched.kubeconfig });
    const code = await exercise(daemon, {
      ready: async () => (await readyzOk(daemon.logs())) && (await clusterHosted(watched))?.apiLoadBalancerIPs?.[0] === API_IP,
      change: () => watched.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': NEW_API_IP } }),
      followed: async () => (await clusterHosted(watched))?.apiLoadBalancerIPs?.[0] === NEW_API_IP,
    });
    updaterOutcomes.push({ label: 'update-infra-status --watch', code, stderr: daemon.stderr(), requests: await requestsOf(watched.server, user) });
  } finally {
    await watched.close();
  }
}));

Updater.after(async () => {
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

Updater('update-infra-status, one-shot and --watch, succeeds without one call refused', () => {
  setupSucceeded(updaterSetup);
  assertNoRefusal(updaterOutcomes);
});

Updater('every call it makes is granted by a rule bound to its ServiceAccount', () => {
  setupSucceeded(updaterSetup);
  assertAllGranted(updaterOutcomes, accountRules);
});

Updater('every grant to its ServiceAccount is used by some call', () => {
  setupSucceeded(updaterSetup);
  assertEveryGrantUsed(updaterOutcomes, accountRules);
});

Updater.run();

// ---------------------------------------------------------------------------------------

const Platforms = suite('every cloud: the same manifests, with platform/<platform>.yaml');

for (const platform of ['aws', 'gcp', 'azure'] as const) {
  Platforms(`${PLATFORM_TYPES[platform]}: the static pods and update-infra-status read the LB config ConfigMap, nothing refused`, async () => {
    const node = await mkdtemp(join(tmpdir(), `lbdns-rbac-${platform}-`));
    try {
      const controlPlane = pods.find((w) => w.manifest.file === 'static-pod-control-plane.yaml');
      assert.ok(controlPlane && deployment && account);
      const outcomes: Outcome[] = [];
      const nodes = await seededCluster(NODE_USER, platform);
      try {
        const init = await mountedArgs(refIn(controlPlane, true), node);
        await provideFiles(init, nodes.kubeconfig);
        outcomes.push(await runOnce('control-plane initContainer render-corefile', nodes, NODE_USER, init));
        const out = init.find((a) => a.startsWith('--out='))?.slice('--out='.length) ?? '';
        assert.match(await readFile(out, 'utf8'), `answer "{{ .Name }} 60 IN A ${API_IP}"`);
      } finally {
        await nodes.close();
      }
      const user = `system:serviceaccount:${account.namespace}:${account.name}`;
      const sa = await seededCluster(user, platform);
      try {
        const args = (await mountedArgs(deployment, node)).filter((a) => a !== '--watch');
        outcomes.push(await runOnce('update-infra-status (one-shot)', sa, user, args, { KUBECONFIG: sa.kubeconfig }));
      } finally {
        await sa.close();
      }
      assertNoRefusal(outcomes);
      const lbConfigReads = outcomes.flatMap((o) => o.requests).filter((r) => r.uri.startsWith(`/api/v1/namespaces/openshift-infra/configmaps`));
      assert.ok(lbConfigReads.length >= 2, "both read the installer's ConfigMap");
    } finally {
      await rm(node, { recursive: true, force: true });
    }
  });
}

Platforms.run();

// ---------------------------------------------------------------------------------------

const AllRbac = suite('every RBAC manifest');

AllRbac('no rule names secrets or uses a wildcard', () => {
  const rules = allRules(manifests);
  assert.ok(rules.length > 0);
  for (const { rule, origin } of rules) {
    const values = [...rule.verbs, ...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...(rule.resourceNames ?? []), ...(rule.nonResourceURLs ?? [])];
    assert.not.ok(values.some((v) => v.includes('*')), `${origin}: ${JSON.stringify(rule)}`);
    assert.not.ok((rule.resources ?? []).some((r) => r === 'secrets' || r.startsWith('secrets/')), `${origin}: ${JSON.stringify(rule)}`);
    assert.is(rule.nonResourceURLs, undefined, `${origin}: lbdns makes no non-resource call`);
  }
});

AllRbac('every binding grants a role defined here: no built-in role such as cluster-admin', () => {
  const bindings = manifests.filter((m) => m.object.kind === 'ClusterRoleBinding' || m.object.kind === 'RoleBinding');
  assert.ok(bindings.length > 0);
  for (const binding of bindings) {
    const ref = binding.object.roleRef as { kind?: string; name?: string };
    const namespace = ref.kind === 'Role' ? binding.object.metadata?.namespace : undefined;
    const defined = manifests.some((m) => m.object.kind === ref.kind && m.object.metadata?.name === ref.name && m.object.metadata?.namespace === namespace);
    assert.ok(defined, `${describe(binding)} grants ${ref.kind}/${ref.name}, which no manifest defines`);
  }
});

AllRbac.run();
