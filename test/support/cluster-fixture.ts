/**
 * A small OpenShift-on-AWS cluster in the real kube-apiserver: the Infrastructure (platform
 * AWS, domain c1.example.com from its internal API URI), the installer's LB config ConfigMap,
 * the router Service and nodes. Plus helpers to run the monitor against it and to read the
 * answers a written Corefile gives. startFakeCluster seeds the same cluster into the test API
 * server, for the faults a real server cannot be made to produce on demand.
 */
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { watchLbStatusCommand } from '../../lib/commands/watch-lb-status.js';
import type { RawConfig } from '../../lib/inputs/config.js';
import { startKubeApiServer, type KubeApiServer, type KubeApiServerOptions, type KubeObject } from './kube-api-server.js';
import { sharedApiServer, startApiServer, type ApiServer, type InfrastructureCrd, type RbacRule, type ResetOptions } from './apiserver.js';

export const DOMAIN = 'c1.example.com';
export const API_IP = '10.0.0.10';
export const API_INT_IP = '10.0.0.20';
export const INGRESS_IP = '10.0.1.30';
export const UPSTREAM = '10.0.0.2';
export const APPS = `*.apps.${DOMAIN}`;

export const ROUTER = { resource: 'services', namespace: 'openshift-ingress', name: 'router-default' } as const;
export const LB_CONFIG = { resource: 'configmaps', namespace: 'openshift-infra', name: 'openshift-lb-config' } as const;
export const DNSRECORD_NS = 'openshift-ingress-operator';
/**
 * How long a monitor may take to ask DNS about an LB hostname again: ResolutionCache's floor of
 * 5 s whatever the TTL (plus 10 % jitter), and a try that times out.
 */
export const REFRESH_WAIT_MS = 10_000;

/** One `status.loadBalancer.ingress[]` entry; `unknown` so tests can seed what the API server accepts but lbdns must not trust. */
export type IngressEntry = unknown;

export interface ClusterSeed {
  /** The Infrastructure's status.platformStatus; default AWS in us-east-1 with dnsType ClusterHosted. */
  readonly platformStatus?: Record<string, unknown>;
  /** Router Service ingress entries; default one entry with INGRESS_IP. null: no router Service at all. */
  readonly ingress?: readonly IngressEntry[] | null;
  /** Node name → InternalIPs; default master-0 = 10.0.0.5. */
  readonly nodes?: Readonly<Record<string, readonly string[]>>;
}

export interface RealClusterSeed extends ClusterSeed, Identity {
  /** A server of the test's own, closed with the fixture: for tests that stop the API (an outage). */
  readonly own?: { readonly sans?: readonly string[] };
  readonly infrastructureCrd?: InfrastructureCrd;
  readonly hostedNetServices?: boolean;
}

export interface FakeClusterSeed extends ClusterSeed {
  readonly server?: KubeApiServerOptions;
}

/** Where lbdns finds the cluster and writes its files: all the monitor needs. */
export interface ClusterAccess {
  readonly kubeconfig: string;
  /** Where tests let lbdns write the Corefile. */
  readonly out: string;
  readonly dir: string;
}

export interface ClusterFixture extends ClusterAccess {
  /** The shared real kube-apiserver, emptied and seeded for this cluster. */
  readonly server: ApiServer;
  close(): Promise<void>;
}

export interface FakeClusterFixture extends ClusterAccess {
  readonly server: KubeApiServer;
  close(): Promise<void>;
}

function routerService(ingress: readonly IngressEntry[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ROUTER.name, namespace: ROUTER.namespace },
    spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    status: { loadBalancer: { ingress } },
  };
}

export function node(name: string, ips: readonly string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { addresses: [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: name }] },
  };
}

export function dnsRecord(name: string, spec: { dnsName: string; targets: readonly string[]; recordType?: 'A' | 'CNAME'; dnsManagementPolicy?: 'Managed' | 'Unmanaged'; recordTTL?: number }): KubeObject {
  return {
    apiVersion: 'ingress.operator.openshift.io/v1',
    kind: 'DNSRecord',
    metadata: { name, namespace: DNSRECORD_NS },
    spec: { recordType: 'A', recordTTL: 30, dnsManagementPolicy: 'Managed', ...spec },
  };
}

/** An AWS cluster installed with cluster-hosted DNS: the design lbdns serves. */
export const AWS_CLUSTER_HOSTED = { type: 'AWS', aws: { region: 'us-east-1', cloudLoadBalancerConfig: { dnsType: 'ClusterHosted' } } } as const;

/** The objects of the seeded cluster. */
function clusterObjects(seed: ClusterSeed): KubeObject[] {
  const platformStatus = seed.platformStatus ?? AWS_CLUSTER_HOSTED;
  return [
    {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Infrastructure',
      metadata: { name: 'cluster' },
      spec: { platformSpec: { type: platformStatus.type } },
      status: { platform: platformStatus.type, platformStatus, apiServerInternalURI: `https://api-int.${DOMAIN}:6443` },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LB_CONFIG.name, namespace: LB_CONFIG.namespace },
      data: { 'internal-api-lb-ips': API_INT_IP, 'external-api-lb-ips': API_IP },
    },
    ...(seed.ingress === null ? [] : [routerService(seed.ingress ?? [{ ip: INGRESS_IP }])]),
    ...Object.entries(seed.nodes ?? { 'master-0': ['10.0.0.5'] }).map(([name, ips]) => node(name, ips)),
  ];
}

/** A copy of the server's kubeconfig in the cluster's own folder: a test may edit it. */
export async function ownKubeconfig(path: string, dir: string): Promise<string> {
  const own = join(dir, 'kubeconfig');
  await copyFile(path, own);
  return own;
}

/** Who lbdns runs as on a seeded real server: the cluster admin by default. */
export interface Identity {
  /** A user holding only these rules. */
  readonly rules?: readonly RbacRule[];
  /** One of the server's IDENTITIES, holding what these RBAC objects (a manifest's) bind to it. */
  readonly as?: { readonly user: string; readonly rbac: readonly KubeObject[] };
}

/** Grants the identity its rights, starts the audit log afresh, and gives its kubeconfig a copy in `dir`. */
export async function identityKubeconfig(server: ApiServer, identity: Identity, dir: string): Promise<string> {
  if (identity.rules !== undefined) await server.grant(identity.rules);
  if (identity.as !== undefined) await server.applyRbac(identity.as.rbac);
  await server.clearRequests();
  return ownKubeconfig(identity.as !== undefined ? server.kubeconfigOf(identity.as.user) : identity.rules === undefined ? server.kubeconfig : server.userKubeconfig, dir);
}

/**
 * A real kube-apiserver holding `objects` — the shared one emptied, or with `own` one of the
 * test's own, closed with the fixture — and a fresh temp dir for lbdns's files.
 */
export async function realCluster(opts: { readonly crds: ResetOptions; readonly own: { readonly sans?: readonly string[] } | undefined; readonly identity: Identity; readonly objects: readonly KubeObject[]; readonly dirPrefix: string }): Promise<ClusterFixture> {
  const { own } = opts;
  const server = own ? await startApiServer({ ...opts.crds, ...own }) : await sharedApiServer();
  if (!own) await server.reset(opts.crds);
  for (const obj of opts.objects) await server.create(obj);
  const dir = await mkdtemp(join(tmpdir(), opts.dirPrefix));
  return {
    server,
    dir,
    kubeconfig: await identityKubeconfig(server, opts.identity, dir),
    out: join(dir, 'Corefile'),
    close: async () => {
      if (own) await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Empties the shared real kube-apiserver and seeds the cluster; lbdns's files go to a fresh temp dir. */
export async function startCluster(seed: RealClusterSeed = {}, extra: readonly KubeObject[] = []): Promise<ClusterFixture> {
  const crds = { ...(seed.infrastructureCrd ? { infrastructureCrd: seed.infrastructureCrd } : {}), ...(seed.hostedNetServices ? { hostedNetServices: true } : {}) };
  return realCluster({ crds, own: seed.own, identity: seed, objects: [...clusterObjects(seed), ...extra], dirPrefix: 'lbdns-cluster-' });
}

/** The same cluster in the test API server, for fault tests; writes its kubeconfig into a fresh temp dir. */
export async function startFakeCluster(seed: FakeClusterSeed = {}): Promise<FakeClusterFixture> {
  const server = await startKubeApiServer(seed.server);
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-cluster-'));
  for (const obj of clusterObjects(seed)) server.create(obj);
  const kubeconfig = await server.writeKubeconfig(dir);
  return {
    server,
    dir,
    kubeconfig,
    out: join(dir, 'Corefile'),
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A writable that keeps what was written, for a command's stderr. */
export function captured(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

export interface RunningMonitor {
  /** `HOST:PORT` of /healthz, /readyz and /metrics. */
  readonly health: string;
  /** Resolves with the exit code once stopped. */
  readonly exited: Promise<number>;
  /** The structured log lines so far. */
  logs(): Record<string, unknown>[];
  stop(): Promise<number>;
}

export interface StartMonitorOptions {
  /** Merged over `--out` (the fixture's) and `--upstream 10.0.0.2`. */
  readonly flags?: RawConfig;
  /** `--dnsmasq-out`. */
  readonly dnsmasqOut?: string;
  /** `--api-port`. */
  readonly apiPort?: number;
  /** The node the monitor runs on (NODE_NAME). */
  readonly nodeName?: string;
}

/** Runs `watch-lb-status` in-process against the fixture, as the monitor container would. */
export async function startMonitor(cluster: ClusterAccess, opts: StartMonitorOptions = {}): Promise<RunningMonitor> {
  const stderr = captured();
  const stdout = captured();
  const abort = new AbortController();
  let listening: (address: string) => void = () => undefined;
  const health = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const exited = watchLbStatusCommand({
    flags: { out: cluster.out, upstreams: [UPSTREAM], ...opts.flags },
    cluster: { kubeconfig: cluster.kubeconfig, ingressService: `${ROUTER.namespace}/${ROUTER.name}`, lbConfig: undefined, waitTimeoutMs: 5000, ...(opts.apiPort === undefined ? {} : { apiPort: opts.apiPort }) },
    metricsAddr: '127.0.0.1:0',
    dnsmasqOut: opts.dnsmasqOut,
    ...(opts.nodeName === undefined ? {} : { nodeName: opts.nodeName }),
    io: { stdout: stdout.stream, stderr: stderr.stream },
    signal: abort.signal,
    onListening: listening,
  });
  const address = await Promise.race([health, exited.then((code) => Promise.reject(new Error(`the monitor exited with ${code} before listening:\n${stderr.text()}`)))]);
  const logs = () =>
    stderr
      .text()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    health: address,
    exited,
    logs,
    stop: async () => {
      abort.abort();
      return exited;
    },
  };
}

/** What a Corefile answers: addresses per served name (`A ip` / `AAAA ip`) and per node name. */
export interface CorefileAnswers {
  readonly names: ReadonlyMap<string, readonly string[]>;
  readonly nodes: ReadonlyMap<string, readonly string[]>;
  readonly upstreams: readonly string[];
}

/**
 * The names a built-in `match` regex stands for: literal labels, `(?:a|b)` alternations, a
 * capture `( … )` and a wildcard's `(?:[^.]+\.)+`, which comes back as `*.`.
 */
export function namesOfMatch(regex: string): string[] {
  const body = regex.replace(/^\^/, '').replace(/\$$/, '').replace('(?:[^.]+\\.)+', '*.');
  let i = 0;
  const sequence = (): string[] => {
    let out = [''];
    while (i < body.length && body[i] !== '|' && body[i] !== ')') {
      let part: string[];
      if (body.startsWith('(?:', i) || body[i] === '(') {
        i += body.startsWith('(?:', i) ? 3 : 1;
        part = [];
        for (;;) {
          part.push(...sequence());
          if (body[i++] === ')') break;
        }
      } else if (body.startsWith('\\.', i)) {
        i += 2;
        part = ['.'];
      } else {
        part = [body[i++] as string];
      }
      out = out.flatMap((o) => part.map((p) => o + p));
    }
    return out;
  };
  return sequence().map((name) => name.replace(/\.$/, ''));
}

/**
 * Reads the answers out of the built-in template's output: each block pair opens with a
 * `#` comment, its first `match` regex says which names it serves (one, or a group that
 * shares its answers), and they own the `answer` lines of its two template blocks; node
 * records are the `hosts` block's `IP NAME FQDN` lines.
 */
export function parseCorefile(text: string): CorefileAnswers {
  const names = new Map<string, string[]>();
  const nodes = new Map<string, string[]>();
  let upstreams: string[] = [];
  let current: string[] | undefined;
  let inHosts = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (line.startsWith('    # ')) {
      current = undefined;
      continue;
    }
    const match = /^match (\S+)$/.exec(trimmed);
    if (match && current === undefined) {
      current = [];
      for (const name of namesOfMatch(match[1] ?? '')) names.set(name, current);
    }
    // The owner is the query name, or a CNAME chain's last name (Gateway DNS), either maybe written with template actions.
    const answer = /^answer ".+ \d+ IN (A|AAAA) (\S+)"$/.exec(trimmed);
    if (answer && current) current.push(`${answer[1]} ${answer[2]}`);
    if (trimmed === 'hosts {' || trimmed === 'hosts /dev/null {') {
      inHosts = true;
      current = undefined;
      continue;
    }
    if (inHosts) {
      if (trimmed === '}') inHosts = false;
      const entry = /^([0-9a-f.:]+) (\S+)( \S+)?$/.exec(trimmed);
      if (entry) {
        const name = entry[2] ?? '';
        nodes.set(name, [...(nodes.get(name) ?? []), entry[1] ?? '']);
      }
    }
    const forward = /^forward \. (.+) \{$/.exec(trimmed);
    if (forward) upstreams = (forward[1] ?? '').split(' ');
  }
  return { names, nodes, upstreams };
}

export async function readAnswers(path: string): Promise<CorefileAnswers | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseCorefile(text);
}

/** The A/AAAA answers of one served name in the Corefile on disk; [] when the file or the name is missing. */
export async function answersOf(path: string, name: string): Promise<readonly string[]> {
  return (await readAnswers(path))?.names.get(name) ?? [];
}

export async function fileId(path: string): Promise<{ ino: number; mtimeMs: number }> {
  const s = await stat(path);
  return { ino: s.ino, mtimeMs: s.mtimeMs };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 10 ms until it returns true; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 4000): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Until every resource lbdns listed has its watch in the audit log: the watches open after the
 * lists, each on its own, and not in step with the first write, so a test that clears the log
 * after the first Corefile waits for them to see only what comes next.
 */
export async function watchesOpen(server: ApiServer): Promise<void> {
  await until('a watch open for every resource listed', async () => {
    const requests = await server.requests();
    const key = (r: { resource: string | undefined; namespace: string | undefined }) => `${r.resource ?? ''}/${r.namespace ?? ''}`;
    const watched = new Set(requests.filter((r) => r.verb === 'watch').map(key));
    const listed = requests.filter((r) => r.verb === 'list').map(key);
    return listed.length > 0 && listed.every((k) => watched.has(k));
  }, 10_000);
}

/** Fails unless `promise` rejects with an error whose message matches `pattern`; returns that error. */
export async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  if (outcome === undefined) throw new Error(`expected a rejection matching ${pattern}, but it resolved`);
  if (!pattern.test(outcome.message)) throw new Error(`expected a rejection matching ${pattern}, got: ${outcome.message}`);
  return outcome;
}
