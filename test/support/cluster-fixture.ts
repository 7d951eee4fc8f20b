/**
 * A small OpenShift-on-AWS cluster in the test API server: the Infrastructure (platform
 * AWS, domain c1.example.com from its internal API URI), the installer's LB config
 * ConfigMap, the router Service and nodes. Plus helpers to run the monitor against it and
 * to read the answers a written Corefile gives.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { watchLbStatusCommand } from '../../lib/commands/watch-lb-status.js';
import type { RawConfig } from '../../lib/inputs/config.js';
import { startKubeApiServer, type KubeApiServer, type KubeApiServerOptions, type KubeObject } from './kube-api-server.js';

export const DOMAIN = 'c1.example.com';
export const API_IP = '10.0.0.10';
export const API_INT_IP = '10.0.0.20';
export const INGRESS_IP = '10.0.1.30';
export const UPSTREAM = '10.0.0.2';
export const APPS = `*.apps.${DOMAIN}`;

export const ROUTER = { resource: 'services', namespace: 'openshift-ingress', name: 'router-default' } as const;
export const LB_CONFIG = { resource: 'configmaps', namespace: 'openshift-aws-infra', name: 'lbconfigfordns' } as const;
export const DNSRECORD_NS = 'openshift-ingress-operator';
/**
 * How long a monitor may take to ask DNS about an LB hostname again: ResolutionCache's floor of
 * 5 s whatever the TTL (plus 10 % jitter), and a try that times out.
 */
export const REFRESH_WAIT_MS = 10_000;

/** One `status.loadBalancer.ingress[]` entry; `unknown` so tests can seed what the API server accepts but lbdns must not trust. */
export type IngressEntry = unknown;

export interface ClusterSeed {
  /** Router Service ingress entries; default one entry with INGRESS_IP. null: no router Service at all. */
  readonly ingress?: readonly IngressEntry[] | null;
  /** Node name → InternalIPs; default master-0 = 10.0.0.5. */
  readonly nodes?: Readonly<Record<string, readonly string[]>>;
  readonly server?: KubeApiServerOptions;
}

export interface ClusterFixture {
  readonly server: KubeApiServer;
  readonly dir: string;
  readonly kubeconfig: string;
  /** Where tests let lbdns write the Corefile. */
  readonly out: string;
  close(): Promise<void>;
}

function routerService(ingress: readonly IngressEntry[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ROUTER.name, namespace: ROUTER.namespace },
    spec: { type: 'LoadBalancer' },
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

/** Starts a server seeded with the cluster and writes its kubeconfig into a fresh temp dir. */
export async function startCluster(seed: ClusterSeed = {}): Promise<ClusterFixture> {
  const server = await startKubeApiServer(seed.server);
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-cluster-'));
  server.create({
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type: 'AWS' } },
    status: { platform: 'AWS', platformStatus: { type: 'AWS', aws: { region: 'us-east-1' } }, apiServerInternalURI: `https://api-int.${DOMAIN}:6443` },
  });
  server.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: LB_CONFIG.name, namespace: LB_CONFIG.namespace },
    data: { 'internal-api-lb-dns-name': API_INT_IP, 'external-api-lb-dns-name': API_IP },
  });
  if (seed.ingress !== null) server.create(routerService(seed.ingress ?? [{ ip: INGRESS_IP }]));
  for (const [name, ips] of Object.entries(seed.nodes ?? { 'master-0': ['10.0.0.5'] })) server.create(node(name, ips));
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
export async function startMonitor(cluster: ClusterFixture, opts: StartMonitorOptions = {}): Promise<RunningMonitor> {
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
    if (trimmed === 'hosts {') {
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
