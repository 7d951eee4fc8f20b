import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { updateInfraStatusCommand } from '../lib/commands/update-infra-status.js';
import type { RawConfig } from '../lib/inputs/config.js';
import { captured, REFRESH_WAIT_MS, sleep, until } from './support/cluster-fixture.js';
import { ApiError, sharedApiServer, type ApiServer } from './support/apiserver.js';
import { withDnsServer } from './support/dns-server.js';
import { startKubeApiServer, StatusError, type KubeApiServer, type KubeObject, type KubeStatus, type PolicyRule } from './support/kube-api-server.js';
import { loadManifests, rulesFor, serviceAccountSubjects, type GrantedRule } from './support/manifests.js';
import { runLbdns, type CliResult } from './support/run-cli.js';

const DOMAIN = 'c1.example.com';
const API_IP = '10.0.0.10';
const API_INT_IP = '10.0.0.20';
const INGRESS_IP = '10.0.1.30';
const LB_HOSTNAME = 'a1b2c3-router.elb.us-east-1.amazonaws.com';
const INFRA = { resource: 'infrastructures', name: 'cluster' } as const;
const ROUTER = { resource: 'services', namespace: 'openshift-ingress', name: 'router-default' } as const;
const LB_CONFIG = { resource: 'configmaps', namespace: 'openshift-infra', name: 'openshift-lb-config' } as const;
const STATUS_PATH = '/apis/config.openshift.io/v1/infrastructures/cluster/status';
const RBAC_MANIFEST = 'rbac-update-infra-status.yaml';

interface Seed {
  /** `status.platformStatus`; default `{ type: 'AWS' }` with no `aws` block, so nothing has defaulted dnsType yet. */
  readonly platformStatus?: Record<string, unknown>;
  /** Router Service `status.loadBalancer.ingress[]`. */
  readonly ingress?: readonly unknown[];
  /** lbdns holds only these rules; absent: a cluster admin. */
  readonly rules?: readonly PolicyRule[];
  /** Which Infrastructure CRD the API server validates with; default release-4.19. */
  readonly infrastructureCrd?: 'release-4.19' | 'main';
}

interface Cluster<S extends ApiServer | KubeApiServer = ApiServer> {
  readonly server: S;
  readonly kubeconfig: string;
  readonly dir: string;
  close(): Promise<void>;
}

/** The installed cluster's objects: the Infrastructure and DNS config, the installer's LB config ConfigMap and the router Service. */
function clusterObjects(seed: Seed): KubeObject[] {
  const platformStatus = seed.platformStatus ?? { type: 'AWS' };
  const platform = String(platformStatus.type);
  return [
    {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Infrastructure',
      metadata: { name: 'cluster' },
      spec: { platformSpec: { type: platform } },
      status: { platform, platformStatus, apiServerInternalURI: `https://api-int.${DOMAIN}:6443`, infrastructureName: 'c1-x7k2p' },
    },
    { apiVersion: 'config.openshift.io/v1', kind: 'DNS', metadata: { name: 'cluster' }, spec: { baseDomain: DOMAIN } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LB_CONFIG.name, namespace: LB_CONFIG.namespace },
      data: { 'internal-api-lb-ips': API_INT_IP, 'external-api-lb-ips': API_IP },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: ROUTER.name, namespace: ROUTER.namespace },
      spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      status: { loadBalancer: { ingress: seed.ingress ?? [{ ip: INGRESS_IP }] } },
    },
  ];
}

/**
 * An installed OpenShift cluster before lbdns first publishes, on the real kube-apiserver,
 * which validates, prunes and defaults writes with the real CRDs and their CEL rules.
 */
async function startCluster(seed: Seed = {}): Promise<Cluster> {
  const server = await sharedApiServer();
  await server.reset({ infrastructureCrd: seed.infrastructureCrd ?? 'release-4.19' });
  for (const obj of clusterObjects(seed)) await server.create(obj);
  if (seed.rules !== undefined) await server.grant(seed.rules);
  await server.clearRequests();
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-infra-status-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, await readFile(seed.rules === undefined ? server.kubeconfig : server.userKubeconfig, 'utf8'));
  return { server, kubeconfig, dir, close: () => rm(dir, { recursive: true, force: true }) };
}

/** The same cluster in the test API server, whose faults a test sets: a write racing lbdns's, failures, a refusal. */
async function startFaultCluster(seed: Seed = {}): Promise<Cluster<KubeApiServer>> {
  const server = await startKubeApiServer();
  for (const obj of clusterObjects(seed)) server.create(obj);
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-infra-status-'));
  const kubeconfig = await server.writeKubeconfig(dir);
  return {
    server,
    kubeconfig,
    dir,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

type PlatformStatus = Record<string, { cloudLoadBalancerConfig?: unknown } | string>;

async function platformStatusOf(server: ApiServer | KubeApiServer): Promise<PlatformStatus> {
  const infra = await (server as ApiServer).get<KubeObject & { status: { platformStatus: PlatformStatus } }>(INFRA);
  return infra?.status.platformStatus ?? {};
}

async function lbConfigOf(server: ApiServer | KubeApiServer, key = 'aws'): Promise<unknown> {
  const block = (await platformStatusOf(server))[key];
  return typeof block === 'object' ? block.cloudLoadBalancerConfig : undefined;
}

async function clusterHostedOf(server: ApiServer | KubeApiServer): Promise<Record<string, string[]> | undefined> {
  return ((await lbConfigOf(server)) as { clusterHosted?: Record<string, string[]> } | undefined)?.clusterHosted;
}

/** One request lbdns made, as the server's audit log (or the test server's record) has it. */
interface Call {
  readonly method: string;
  readonly path: string;
  readonly dryRun: boolean;
  readonly status: number;
  readonly verb: string;
}

const METHODS: Readonly<Record<string, string>> = { get: 'GET', list: 'GET', watch: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' };

async function calls(server: ApiServer | KubeApiServer): Promise<Call[]> {
  if (Array.isArray(server.requests)) return server.requests.map((r) => ({ method: r.method, path: r.path, dryRun: r.query.dryRun === 'All', status: r.status, verb: r.verb }));
  return (await (server as ApiServer).requests()).map((r) => {
    const [path = '', query = ''] = r.uri.split('?');
    return { method: METHODS[r.verb] ?? r.verb, path, dryRun: new URLSearchParams(query).get('dryRun') === 'All', status: r.status, verb: r.verb };
  });
}

/** Status writes that persist: the first write's dry run (which checks the CRD keeps the field) is not one. */
const patches = async (server: ApiServer | KubeApiServer): Promise<Call[]> => (await calls(server)).filter((r) => r.method === 'PATCH' && !r.dryRun);
const dryRuns = async (server: ApiServer | KubeApiServer): Promise<Call[]> => (await calls(server)).filter((r) => r.method === 'PATCH' && r.dryRun);

/** A `status.platformStatus` already set to ClusterHosted, with these lists. */
function clusterHosted(lists: Record<string, readonly string[]>): Record<string, unknown> {
  return { type: 'AWS', aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: lists } } };
}

const ALL_LISTS = { apiLoadBalancerIPs: [API_IP], apiIntLoadBalancerIPs: [API_INT_IP], ingressLoadBalancerIPs: [INGRESS_IP] };

/** The installed clusters here have no dnsType yet: the admin's go-ahead to set it is given. */
function publish(cluster: Cluster<ApiServer | KubeApiServer>, ...args: string[]): Promise<CliResult> {
  return runLbdns(['update-infra-status', '--kubeconfig', cluster.kubeconfig, '--wait-timeout', '4s', '--set-dns-type-cluster-hosted', ...args]);
}

interface Watching {
  /** `HOST:PORT` of /healthz, /readyz and /metrics. */
  readonly health: string;
  readonly exited: Promise<number>;
  stderr(): string;
  stop(): Promise<number>;
}

/** `update-infra-status --watch` in-process, stopped through its AbortSignal as SIGTERM would. */
async function startWatch(cluster: Cluster<ApiServer | KubeApiServer>, flags: RawConfig = {}, fields = 'api,api-int,ingress', dryRun = false): Promise<Watching> {
  const stderr = captured();
  const stdout = captured();
  const abort = new AbortController();
  let listening: (address: string) => void = () => undefined;
  const started = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const exited = updateInfraStatusCommand({
    flags,
    cluster: { kubeconfig: cluster.kubeconfig, ingressService: `${ROUTER.namespace}/${ROUTER.name}`, lbConfig: undefined, waitTimeoutMs: 4000 },
    fields,
    dryRun,
    watch: true,
    setDnsType: true,
    metricsAddr: '127.0.0.1:0',
    io: { stdout: stdout.stream, stderr: stderr.stream },
    signal: abort.signal,
    onListening: listening,
  });
  const health = await Promise.race([started, exited.then((code) => Promise.reject(new Error(`--watch exited with ${code} before listening:\n${stderr.text()}`)))]);
  return {
    health,
    exited,
    stderr: stderr.text,
    stop: async () => {
      abort.abort();
      return exited;
    },
  };
}


// ---------------------------------------------------------------------------------------
// One-shot

test('a cluster whose dnsType is not set is not switched without --set-dns-type-cluster-hosted: exit 2 naming the flag, nothing sent', async () => {
  const cluster = await startCluster();
  try {
    const result = await runLbdns(['update-infra-status', '--kubeconfig', cluster.kubeconfig, '--wait-timeout', '4s']);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'dnsType is not set: publishing would set it to ClusterHosted');
    assert.match(result.stderr, '--set-dns-type-cluster-hosted');
    assert.equal((await calls(cluster.server)).filter((r) => r.method === 'PATCH'), []);
    assert.is(await lbConfigOf(cluster.server), undefined);
  } finally {
    await cluster.close();
  }
});

test('a cluster installed with ClusterHosted is published without being asked', async () => {
  const cluster = await startCluster({ platformStatus: clusterHosted({}) });
  try {
    const result = await runLbdns(['update-infra-status', '--kubeconfig', cluster.kubeconfig, '--wait-timeout', '4s']);
    assert.is(result.code, 0, result.stderr);
    assert.equal(await clusterHostedOf(cluster.server), ALL_LISTS);
  } finally {
    await cluster.close();
  }
});

test('the first write sets dnsType ClusterHosted together with the three lists', async () => {
  const cluster = await startCluster();
  try {
    const result = await publish(cluster);
    assert.is(result.code, 0, result.stderr);
    assert.equal((await lbConfigOf(cluster.server)), { dnsType: 'ClusterHosted', clusterHosted: ALL_LISTS });
    const sent = (await patches(cluster.server));
    assert.is(sent.length, 1);
    assert.is(sent[0]?.path, STATUS_PATH);
  } finally {
    await cluster.close();
  }
});

test('the first write is preceded by a dry run of the same patch, and later writes are not', async () => {
  const cluster = await startCluster();
  try {
    assert.is((await publish(cluster)).code, 0);
    const writes = (await calls(cluster.server)).filter((r) => r.method === 'PATCH');
    assert.equal(writes.map((r) => r.dryRun), [true, false], 'a dry run, then the write');
    await cluster.server.patchStatus({ resource: 'services', namespace: 'openshift-ingress', name: 'router-default' }, { loadBalancer: { ingress: [{ ip: '10.0.1.77' }] } });
    await cluster.server.clearRequests();
    assert.is((await publish(cluster)).code, 0);
    assert.equal((await dryRuns(cluster.server)), []);
    assert.is((await patches(cluster.server)).length, 1);
  } finally {
    await cluster.close();
  }
});

test('the status write changes nothing outside the owned lists', async () => {
  const cluster = await startCluster();
  try {
    const before = await cluster.server.get<KubeObject & { spec: unknown; status: Record<string, unknown> }>(INFRA);
    const result = await publish(cluster);
    assert.is(result.code, 0, result.stderr);
    const after = await cluster.server.get<KubeObject & { spec: unknown; status: Record<string, unknown> }>(INFRA);
    assert.equal(after?.spec, before?.spec);
    assert.equal({ ...after?.status, platformStatus: undefined }, { ...before?.status, platformStatus: undefined });
    assert.is((after?.status.platformStatus as { type?: string }).type, 'AWS');
  } finally {
    await cluster.close();
  }
});

test("the lists lbdns writes are lbdns's in the object's managedFields", async () => {
  const cluster = await startCluster();
  try {
    const result = await publish(cluster);
    assert.is(result.code, 0, result.stderr);
    const after = await cluster.server.get<KubeObject & { metadata: { managedFields?: { manager?: string; subresource?: string; fieldsV1?: unknown }[] } }>(INFRA);
    const lbdns = (after?.metadata.managedFields ?? []).filter((f) => f.manager === 'lbdns');
    assert.equal(lbdns.map((f) => f.subresource), ['status']);
    assert.match(JSON.stringify(lbdns[0]?.fieldsV1), 'f:apiLoadBalancerIPs');
  } finally {
    await cluster.close();
  }
});

test('a status that already lists the same IPs, in any order, is not patched', async () => {
  const cluster = await startCluster({
    platformStatus: clusterHosted({ ...ALL_LISTS, ingressLoadBalancerIPs: ['fd00::30', INGRESS_IP] }),
    ingress: [{ ip: INGRESS_IP }, { ip: 'fd00::30' }],
  });
  try {
    const result = await publish(cluster);
    assert.is(result.code, 0, result.stderr);
    assert.equal((await patches(cluster.server)), []);
    assert.match(result.stderr, 'already up to date');
  } finally {
    await cluster.close();
  }
});

test('a concurrent status write between read and patch gets a 409, and the retry keeps both changes', async () => {
  const cluster = await startFaultCluster();
  const operatorIps = ['10.0.1.77'];
  let operatorWrote = false;
  cluster.server.beforeWrite(({ path }) => {
    if (path !== STATUS_PATH || operatorWrote) return;
    operatorWrote = true;
    cluster.server.patchStatus(INFRA, { platformStatus: clusterHosted({ ingressLoadBalancerIPs: operatorIps }) });
  });
  try {
    const result = await publish(cluster, '--fields', 'api,api-int');
    assert.is(result.code, 0, result.stderr);
    // The 409 may meet the first write's dry run or its real write: either way one refusal, then one write.
    const statusWrites = (await calls(cluster.server)).filter((r) => r.method === 'PATCH');
    assert.equal(statusWrites.map((r) => r.status).filter((s) => s === 409), [409]);
    assert.equal((await patches(cluster.server)).filter((r) => r.status === 200).length, 1);
    assert.equal((await clusterHostedOf(cluster.server)), { apiLoadBalancerIPs: [API_IP], apiIntLoadBalancerIPs: [API_INT_IP], ingressLoadBalancerIPs: operatorIps });
  } finally {
    await cluster.close();
  }
});

test('a cluster set to PlatformDefault is refused with an explanation and not patched', async () => {
  // The installer's aws block: the API server defaults its cloudLoadBalancerConfig to PlatformDefault.
  const cluster = await startCluster({ platformStatus: { type: 'AWS', aws: { region: 'us-east-1' } } });
  try {
    assert.equal((await lbConfigOf(cluster.server)), { dnsType: 'PlatformDefault' });
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'PlatformDefault');
    assert.match(result.stderr, 'immutable');
    assert.equal((await patches(cluster.server)), []);
  } finally {
    await cluster.close();
  }
});

test('more than 16 IPs for one list exits 2 naming the list, and nothing is written', async () => {
  await withDnsServer(async (dns) => {
    const ips = Array.from({ length: 17 }, (_, i) => `10.0.2.${i + 1}`);
    dns.set(LB_HOSTNAME, { A: ips });
    const cluster = await startCluster({ ingress: [{ hostname: LB_HOSTNAME }] });
    try {
      const result = await publish(cluster, '--dns-server', dns.address);
      assert.is(result.code, 2, result.stderr);
      assert.match(result.stderr, 'ingressLoadBalancerIPs');
      assert.match(result.stderr, '16');
      assert.equal((await patches(cluster.server)), []);
      assert.is((await lbConfigOf(cluster.server)), undefined);
    } finally {
      await cluster.close();
    }
  });
});

test('a router Service with 17 ingress IPs exits 2 naming the list, and nothing is written', async () => {
  const cluster = await startCluster({ ingress: Array.from({ length: 17 }, (_, i) => ({ ip: `10.0.3.${i + 1}` })) });
  try {
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'ingressLoadBalancerIPs');
    assert.equal((await patches(cluster.server)), []);
  } finally {
    await cluster.close();
  }
});

test("an LB one of whose host names has no answer leaves its published list as it is, rather than shrink it to the other's IPs", async () => {
  await withDnsServer(async (dns) => {
    dns.set('a.lb.test', { A: ['10.0.0.1'] });
    dns.fail('b.lb.test', 'servfail');
    const cluster = await startCluster({ platformStatus: clusterHosted({ ...ALL_LISTS, apiIntLoadBalancerIPs: ['10.0.0.1', '10.0.0.2'] }) });
    try {
      await cluster.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': 'a.lb.test,b.lb.test' } });
      const result = await publish(cluster, '--dns-server', dns.address);
      assert.is(result.code, 0, result.stderr);
      assert.match(result.stderr, /"list":"apiIntLoadBalancerIPs"/);
      assert.match(result.stderr, /"msg":"nothing to send: the lists lbdns knows the IPs of are up to date","platform":"AWS","leftAlone":\["apiIntLoadBalancerIPs"\]/);
      assert.not.match(result.stderr, 'already up to date');
      assert.equal((await clusterHostedOf(cluster.server))?.apiIntLoadBalancerIPs, ['10.0.0.1', '10.0.0.2']);
    } finally {
      await cluster.close();
    }
  });
});

test('an LB ConfigMap with 17 api-int IPs exits 2 naming the list, and nothing is written', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': Array.from({ length: 17 }, (_, i) => `10.0.4.${i + 1}`).join(',') } });
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'apiIntLoadBalancerIPs');
    assert.equal((await patches(cluster.server)), []);
  } finally {
    await cluster.close();
  }
});

test('beside the ingress operator, lbdns owning api and api-int never touches ingressLoadBalancerIPs', async () => {
  const cluster = await startCluster();
  try {
    const first = await publish(cluster, '--fields', 'api,api-int');
    assert.is(first.code, 0, first.stderr);
    assert.equal((await clusterHostedOf(cluster.server)), { apiLoadBalancerIPs: [API_IP], apiIntLoadBalancerIPs: [API_INT_IP] });

    // The operator publishes what it computes for the router, which need not be what lbdns sees.
    const operatorIps = ['10.0.1.31', '10.0.1.32'];
    await cluster.server.patchStatus(INFRA, { platformStatus: clusterHosted({ ingressLoadBalancerIPs: operatorIps }) });
    await cluster.server.clearRequests();

    const second = await publish(cluster, '--fields', 'api,api-int');
    assert.is(second.code, 0, second.stderr);
    assert.equal((await patches(cluster.server)), []);
    assert.equal((await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs, operatorIps);
  } finally {
    await cluster.close();
  }
});

test('owning api and api-int, a router Service with 17 ingress IPs is never read, and api and api-int are published', async () => {
  const cluster = await startCluster({ ingress: Array.from({ length: 17 }, (_, i) => ({ ip: `10.0.3.${i + 1}` })) });
  try {
    const result = await publish(cluster, '--fields', 'api,api-int');
    assert.is(result.code, 0, result.stderr);
    assert.equal((await clusterHostedOf(cluster.server)), { apiLoadBalancerIPs: [API_IP], apiIntLoadBalancerIPs: [API_INT_IP] });
    const serviceCalls = (await calls(cluster.server)).filter((r) => r.path.includes('/services'));
    assert.equal(serviceCalls.map((r) => `${r.verb} ${r.path}`), [], 'the router Service was neither listed nor watched');
  } finally {
    await cluster.close();
  }
});

test('--example is refused with exit 2, since the example cluster must never be published, and the API server is not asked', async () => {
  const cluster = await startCluster();
  try {
    const result = await publish(cluster, '--example');
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, '--example');
    assert.match(result.stderr, 'must not be published');
    assert.equal((await calls(cluster.server)).map((r) => `${r.method} ${r.path}`), []);
  } finally {
    await cluster.close();
  }
});

test('--dry-run prints the merge patch and stores nothing, the API server asked with a dry run of it', async () => {
  const cluster = await startCluster();
  try {
    const rv = (await cluster.server.get(INFRA))?.metadata?.resourceVersion;
    const result = await publish(cluster, '--dry-run');
    assert.is(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout), {
      metadata: { resourceVersion: rv },
      status: { platformStatus: { aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: ALL_LISTS } } } },
    });
    assert.equal((await patches(cluster.server)), []);
    assert.is((await dryRuns(cluster.server)).length, 1);
    assert.is((await lbConfigOf(cluster.server)), undefined);
  } finally {
    await cluster.close();
  }
});

test('--dry-run where the CRD has no field for the lists (Azure, release-4.19) exits 2 as the write would', async () => {
  const cluster = await startCluster({ platformStatus: { type: 'Azure' } });
  try {
    const result = await publish(cluster, '--dry-run');
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'status.platformStatus.azure.cloudLoadBalancerConfig');
    assert.is(result.stdout, '', 'no patch printed that the server would not take');
    assert.equal((await patches(cluster.server)), []);
  } finally {
    await cluster.close();
  }
});

test('--dry-run that meets a conflict re-reads and prints the patch once', async () => {
  const cluster = await startFaultCluster();
  cluster.server.failNext({ method: 'PATCH', pathIncludes: '/status' }, 409, 1);
  try {
    const result = await publish(cluster, '--dry-run');
    assert.is(result.code, 0, result.stderr);
    assert.match(result.stderr, 're-reading and retrying');
    assert.ok(JSON.parse(result.stdout), result.stdout);
    assert.is((await dryRuns(cluster.server)).length, 2, 'the conflict, then the dry run that succeeded');
  } finally {
    await cluster.close();
  }
});

test('a platform lbdns does not publish for (BareMetal) exits 2 at once', async () => {
  const cluster = await startCluster({ platformStatus: { type: 'BareMetal' } });
  try {
    const started = Date.now();
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, '"BareMetal"');
    assert.ok(Date.now() - started < 2000, 'refused without waiting for LB data');
    assert.equal((await patches(cluster.server)), []);
  } finally {
    await cluster.close();
  }
});

test('Azure, with the newest Infrastructure CRD (openshift/api main), publishes its LB IPs as AWS and GCP do', async () => {
  const cluster = await startCluster({ platformStatus: { type: 'Azure' }, infrastructureCrd: 'main' });
  try {
    const result = await publish(cluster);
    assert.is(result.code, 0, result.stderr);
    assert.equal((await lbConfigOf(cluster.server, 'azure')), {
      dnsType: 'ClusterHosted',
      clusterHosted: { apiIntLoadBalancerIPs: [API_INT_IP], apiLoadBalancerIPs: [API_IP], ingressLoadBalancerIPs: [INGRESS_IP] },
    });
  } finally {
    await cluster.close();
  }
});

test('Azure, whose release-4.19 CRD has no cloudLoadBalancerConfig, exits 2 saying the field was dropped', async () => {
  const cluster = await startCluster({ platformStatus: { type: 'Azure' } });
  try {
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'status.platformStatus.azure.cloudLoadBalancerConfig');
    assert.match(result.stderr, 'Azure');
    assert.is((await lbConfigOf(cluster.server, 'azure')), undefined);
    assert.equal((await patches(cluster.server)), [], 'only the dry run was sent: nothing was stored');
  } finally {
    await cluster.close();
  }
});

test('Azure on the release-4.19 CRD, its platform block written, exits 2 saying the CRD lacks the field, without asking for --set-dns-type-cluster-hosted', async () => {
  const cluster = await startCluster({ platformStatus: { type: 'Azure', azure: { resourceGroupName: 'rg', cloudName: 'AzurePublicCloud' } } });
  try {
    const result = await runLbdns(['update-infra-status', '--kubeconfig', cluster.kubeconfig, '--wait-timeout', '4s']);
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, "status.platformStatus.azure has no cloudLoadBalancerConfig: this cluster's Infrastructure CRD has no such field for Azure");
    assert.not.match(result.stderr, '--set-dns-type-cluster-hosted');
    assert.equal((await calls(cluster.server)).filter((r) => r.method === 'PATCH'), []);
  } finally {
    await cluster.close();
  }
});

test('a 422 from the API server is shown field by field', async () => {
  // What the real server answers a status write with a non-IP and a repeated IP (its CRD's CEL
  // and list rules), replayed to lbdns by the test server.
  const real = await startCluster({ platformStatus: clusterHosted(ALL_LISTS) });
  const refused = await real.server.patchStatus(INFRA, { platformStatus: clusterHosted({ apiLoadBalancerIPs: ['api.example.com'], ingressLoadBalancerIPs: [INGRESS_IP, INGRESS_IP] }) }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(refused instanceof ApiError, 'the real server refused the write');
  const status = refused.body as KubeStatus;
  await real.close();
  const causes = status.details?.causes ?? [];
  assert.is(status.code, 422, JSON.stringify(status));
  assert.is(causes.length, 2, JSON.stringify(causes));
  const cluster = await startFaultCluster();
  cluster.server.beforeWrite(() => {
    throw new StatusError(status);
  });
  try {
    const result = await publish(cluster);
    assert.is(result.code, 2, result.stderr);
    for (const cause of causes) assert.match(result.stderr, `  ${cause.field}: ${cause.message}\n`);
    assert.is((await calls(cluster.server)).filter((r) => r.method === 'PATCH').length, 1, 'a refusal is not retried');
  } finally {
    await cluster.close();
  }
});

test("an LB hostname in the router Service is published as the IPs it resolves to, v4 sorted before v6", async () => {
  await withDnsServer(async (dns) => {
    dns.set(LB_HOSTNAME, { A: ['10.0.1.41', '10.0.1.5'], AAAA: ['fd00::41'] });
    const cluster = await startCluster({ ingress: [{ hostname: LB_HOSTNAME }, { ip: 'fd00::7' }, { ip: '10.0.1.200' }] });
    try {
      const result = await publish(cluster, '--dns-server', dns.address);
      assert.is(result.code, 0, result.stderr);
      assert.equal((await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs, ['10.0.1.5', '10.0.1.41', '10.0.1.200', 'fd00::7', 'fd00::41']);
    } finally {
      await cluster.close();
    }
  });
});

test('LB flags win over the cluster', async () => {
  const cluster = await startCluster();
  try {
    const result = await publish(cluster, '--api-lb', '192.0.2.10', '--api-lb', '2001:db8::10');
    assert.is(result.code, 0, result.stderr);
    assert.equal((await clusterHostedOf(cluster.server))?.apiLoadBalancerIPs, ['192.0.2.10', '2001:db8::10']);
    assert.equal((await clusterHostedOf(cluster.server))?.apiIntLoadBalancerIPs, [API_INT_IP]);
  } finally {
    await cluster.close();
  }
});

test("a node's loopback-only resolv.conf does not stop the publishing: upstreams are not used", async () => {
  const cluster = await startCluster();
  try {
    const resolvConf = join(cluster.dir, 'resolv.conf');
    await writeFile(resolvConf, 'nameserver 127.0.0.53\n');
    const result = await publish(cluster, '--resolv-conf', resolvConf);
    assert.is(result.code, 0, result.stderr);
    assert.equal((await lbConfigOf(cluster.server)), { dnsType: 'ClusterHosted', clusterHosted: ALL_LISTS });
  } finally {
    await cluster.close();
  }
});

// ---------------------------------------------------------------------------------------
// --watch

test('--watch publishes a router Service status change, and exits 0 when stopped', async () => {
  const cluster = await startCluster();
  let watching: Watching | undefined;
  try {
    watching = await startWatch(cluster);
    await until('the first publication', async () => (await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs?.[0] === INGRESS_IP);
    await cluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip: '10.0.1.99' }, { ip: INGRESS_IP }] } });
    await until('the new ingress IP', async () => (await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs?.length === 2);
    assert.equal((await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs, [INGRESS_IP, '10.0.1.99']);
    assert.is(await watching.stop(), 0, watching.stderr());
  } finally {
    await watching?.stop();
    await cluster.close();
  }
});

/** A --watch that has published its first lists, stopped and its cluster closed however the body ends. */
async function withPublished(body: (cluster: Awaited<ReturnType<typeof startCluster>>, watching: Watching) => Promise<void>): Promise<void> {
  const cluster = await startCluster();
  let watching: Watching | undefined;
  try {
    watching = await startWatch(cluster);
    await until('the first publication', async () => (await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs?.[0] === INGRESS_IP);
    await body(cluster, watching);
  } finally {
    await watching?.stop();
    await cluster.close();
  }
}

const metricsOf = async (watching: Watching): Promise<string> => (await fetch(`http://${watching.health}/metrics`)).text();
const inSync = async (watching: Watching): Promise<string | undefined> => /^lbdns_infrastructure_status_in_sync (\d)$/m.exec(await metricsOf(watching))?.[1];

test('--watch writes back a published list another hand overwrites, with no LB change', async () => {
  await withPublished(async (cluster) => {
    await cluster.server.patchStatus(INFRA, { platformStatus: clusterHosted({ ...ALL_LISTS, apiIntLoadBalancerIPs: ['10.9.9.9'] }) });
    assert.equal((await clusterHostedOf(cluster.server))?.apiIntLoadBalancerIPs, ['10.9.9.9']);
    await until('the list written back', async () => (await clusterHostedOf(cluster.server))?.apiIntLoadBalancerIPs?.[0] === API_INT_IP);
    assert.equal(await clusterHostedOf(cluster.server), ALL_LISTS);
  });
});

test('--watch: an LB grown past the 16 IPs the status takes is reported out of sync (lbdns_infrastructure_status_in_sync 0), the published lists left alone', async () => {
  await withPublished(async (cluster, watching) => {
    assert.is(await inSync(watching), '1');
    await cluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: Array.from({ length: 17 }, (_, i) => ({ ip: `10.0.1.${100 + i}` })) } });
    await until('reported out of sync', async () => (await inSync(watching)) === '0');
    assert.equal((await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs, [INGRESS_IP]);
  });
});

test('--watch: a list left alone for a host name with no answer is reported out of sync', async () => {
  await withDnsServer(async (dns) => {
    dns.set('a.lb.test', { A: ['10.0.0.1'] });
    dns.fail('b.lb.test', 'servfail');
    const cluster = await startCluster({ platformStatus: clusterHosted({ ...ALL_LISTS, apiIntLoadBalancerIPs: ['10.0.0.1', '10.0.0.2'] }) });
    let watching: Watching | undefined;
    try {
      await cluster.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': 'a.lb.test,b.lb.test' } });
      const w = await startWatch(cluster, { dnsServers: [dns.address] });
      watching = w;
      await until('ready', async () => (await fetch(`http://${w.health}/readyz`)).status === 200, 10_000);
      assert.is(await inSync(w), '0');
      assert.equal((await clusterHostedOf(cluster.server))?.apiIntLoadBalancerIPs, ['10.0.0.1', '10.0.0.2']);
    } finally {
      await watching?.stop();
      await cluster.close();
    }
  });
});

test("--watch exports its own gauge, lbdns_infrastructure_status_in_sync, and none of the Corefile's", async () => {
  await withPublished(async (_cluster, watching) => {
    const text = await metricsOf(watching);
    assert.match(text, /^lbdns_infrastructure_status_in_sync 1$/m);
    for (const name of ['lbdns_last_change_timestamp_seconds', 'lbdns_corefile_out_of_date']) assert.not.ok(text.includes(name), name);
  });
});

test('--watch --dry-run is ready but not in sync while the status lacks the lists it would send', async () => {
  const cluster = await startCluster();
  let watching: Watching | undefined;
  try {
    watching = await startWatch(cluster, {}, 'api,api-int,ingress', true);
    await until('ready', async () => (await fetch(`http://${watching?.health}/readyz`)).status === 200);
    assert.is(await inSync(watching), '0');
    assert.is(await clusterHostedOf(cluster.server), undefined);
  } finally {
    await watching?.stop();
    await cluster.close();
  }
});

test('--watch: a status write the API server refuses (422) waits for the LBs to change, logged as such, not retried on a timer', async () => {
  const cluster = await startFaultCluster();
  const status: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422, message: 'Infrastructure.config.openshift.io "cluster" is invalid', details: { causes: [{ field: 'status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted.ingressLoadBalancerIPs[0]', message: 'Invalid value' }] } };
  cluster.server.beforeWrite(() => {
    throw new StatusError(status);
  });
  const watching = await startWatch(cluster);
  try {
    await until('the refusal logged', () => watching.stderr().includes('the LB IPs cannot be published'), 8000);
    const patches = (await calls(cluster.server)).filter((r) => r.method === 'PATCH').length;
    await sleep(3000);
    assert.is((await calls(cluster.server)).filter((r) => r.method === 'PATCH').length, patches, 'no write until the LBs change');
    assert.not.match(watching.stderr(), 'publishing the LB IPs failed; retrying');
  } finally {
    await watching.stop();
    await cluster.close();
  }
});

test('SIGTERM ends --watch with exit 0', async () => {
  const cluster = await startCluster();
  let watching: Watching | undefined;
  try {
    watching = await startWatch(cluster);
    await until('the first publication', async () => (await clusterHostedOf(cluster.server)) !== undefined);
    process.emit('SIGTERM', 'SIGTERM');
    assert.is(await watching.exited, 0, watching.stderr());
    assert.match(watching.stderr(), '"why":"SIGTERM"');
  } finally {
    await watching?.stop();
    await cluster.close();
  }
});

test('--watch: while an LB hostname gets SERVFAIL its list keeps its last IPs, and other changes are still published', async () => {
  await withDnsServer(async (dns) => {
    dns.set(LB_HOSTNAME, { A: ['10.0.1.41'], ttl: 1 });
    const cluster = await startCluster({ ingress: [{ hostname: LB_HOSTNAME }] });
    let watching: Watching | undefined;
    try {
      const w = await startWatch(cluster, { dnsServers: [dns.address] });
      watching = w;
      await until('the first publication', async () => (await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs?.[0] === '10.0.1.41');
      dns.fail(LB_HOSTNAME, 'servfail');
      await until('a failed refresh', () => w.stderr().includes('"reason":"SERVFAIL"'), REFRESH_WAIT_MS);
      await cluster.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': '10.0.0.11' } });
      await until('the new api IP', async () => (await clusterHostedOf(cluster.server))?.apiLoadBalancerIPs?.[0] === '10.0.0.11');
      assert.equal((await clusterHostedOf(cluster.server))?.ingressLoadBalancerIPs, ['10.0.1.41']);
      assert.is(await w.stop(), 0, w.stderr());
    } finally {
      await watching?.stop();
      await cluster.close();
    }
  });
});

test('a one-shot publication waits out an API server failing longer than its quick retries, within --wait-timeout', async () => {
  const cluster = await startFaultCluster();
  // Twice what one round of quick retries (6 tries) absorbs.
  cluster.server.failNext({ method: 'PATCH', pathIncludes: '/status' }, 503, 12);
  try {
    const result = await runLbdns(['update-infra-status', '--kubeconfig', cluster.kubeconfig, '--wait-timeout', '30s', '--set-dns-type-cluster-hosted']);
    assert.is(result.code, 0, result.stderr);
    assert.equal(await clusterHostedOf(cluster.server), ALL_LISTS);
    assert.match(result.stderr, 'asking again until --wait-timeout');
  } finally {
    await cluster.close();
  }
});

test('--watch answers /healthz while the API server cannot be read yet, so a liveness probe does not restart it', async () => {
  const cluster = await startFaultCluster();
  cluster.server.failNext({ pathIncludes: 'infrastructures' }, 503, 1000);
  let watching: Watching | undefined;
  try {
    const w = await startWatch(cluster);
    watching = w;
    assert.is((await fetch(`http://${w.health}/healthz`)).status, 200);
    assert.is((await fetch(`http://${w.health}/readyz`)).status, 503);
  } finally {
    await watching?.stop();
    await cluster.close();
  }
});

test('--watch: a failed publication is retried with no cluster change, and /readyz is 503 until it succeeds', async () => {
  const cluster = await startFaultCluster();
  // More failures than one publication's own retries (5 after the first try) absorb, so the sink sees a failure.
  cluster.server.failNext({ method: 'PATCH', pathIncludes: '/status' }, 500, 7);
  let watching: Watching | undefined;
  try {
    const w = await startWatch(cluster);
    watching = w;
    const readyz = async () => {
      const res = await fetch(`http://${w.health}/readyz`);
      return { status: res.status, body: await res.text() };
    };
    await until('a failed publication', () => w.stderr().includes('"msg":"publishing the LB IPs failed; retrying"'));
    assert.match(w.stderr(), '"retryInMs":1000');
    const failing = await readyz();
    assert.is(failing.status, 503);
    assert.match(failing.body, 'not been published');
    await until('the retried publication', async () => (await clusterHostedOf(cluster.server)) !== undefined);
    assert.equal((await clusterHostedOf(cluster.server)), ALL_LISTS);
    assert.is((await calls(cluster.server)).filter((r) => r.status === 500).length, 7);
    await until('/readyz 200', async () => (await readyz()).status === 200);
    assert.is(await w.stop(), 0, w.stderr());
  } finally {
    await watching?.stop();
    await cluster.close();
  }
});

// ---------------------------------------------------------------------------------------
// RBAC

/** The identity manifests/rbac-update-infra-status.yaml creates, and every rule the manifests bind to it. */
function updaterAccount(): { user: string; rules: GrantedRule[] } {
  const manifests = loadManifests();
  const accounts = manifests.filter((m) => m.file === RBAC_MANIFEST && m.object.kind === 'ServiceAccount');
  assert.is(accounts.length, 1, `${RBAC_MANIFEST} defines one ServiceAccount`);
  const { namespace = '', name = '' } = accounts[0]?.object.metadata ?? {};
  return { user: `system:serviceaccount:${namespace}:${name}`, rules: rulesFor(manifests, serviceAccountSubjects(namespace, name)) };
}

test('without patch on infrastructures/status the command exits 2 naming it, and nothing is written', async () => {
  const account = updaterAccount();
  const rules = account.rules.filter((rule) => !rule.resources?.includes('infrastructures/status'));
  assert.is(rules.length, account.rules.length - 1);
  const cluster = await startCluster({ rules });
  try {
    const result = await publish(cluster, '--fields', 'api,api-int');
    assert.is(result.code, 2, result.stderr);
    assert.match(result.stderr, 'cannot patch resource "infrastructures/status"');
    assert.match(result.stderr, 'rbac-update-infra-status.yaml');
    assert.is((await lbConfigOf(cluster.server)), undefined);
  } finally {
    await cluster.close();
  }
});

test.run();
