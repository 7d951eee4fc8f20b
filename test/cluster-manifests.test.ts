/**
 * What `make cluster-manifests` renders, played on a node: a cluster's MachineConfigs rendered
 * once, and a new node, from an empty host, running what they carry — the static pod's
 * initContainer (real lbdns, real kube-apiserver found through the seed), real CoreDNS on the
 * Corefile it wrote and, on-prem, Debian's dnsmasq configured as the MachineConfig configures
 * it. Only what a node does differently on loopback is changed: ports (the upstream's given
 * directly, since a resolv.conf cannot name one), and every path under a temp root.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { dump as toYaml, load as parseYaml } from 'js-yaml';
import { clusterManifests } from '../scripts/cluster-manifests.js';
import { DNSMASQ_DIR, STATIC_POD_PATH } from '../scripts/manifests.js';
import { createLogger } from '../lib/runtime/log.js';
import { API_INT_IP, DOMAIN as CLOUD_DOMAIN, LB_CONFIG, startCluster, until, type ClusterFixture } from './support/cluster-fixture.js';
import { query, startCoreDns } from './support/coredns.js';
import { startDnsServer } from './support/dns-server.js';
import { API_VIP, DOMAIN, INGRESS_VIP, withOnPrem } from './support/on-prem-fixture.js';
import { freePort } from './support/peers.js';
import { startDnsmasq, type Dnsmasq } from './support/dnsmasq.js';
import { logLines, runLbdns } from './support/run-cli.js';
import type { PodSpec } from './support/manifests.js';

const quiet = createLogger({ write: () => true });

interface MachineConfig {
  readonly spec: {
    readonly config: {
      readonly storage: { readonly files: readonly { path: string; contents: { source: string } }[] };
      readonly systemd?: { readonly units: readonly { name: string; enabled?: boolean; contents: string }[] };
    };
  };
}

/** The files a MachineConfig puts on a node, path → contents. */
function filesOf(text: string): Map<string, string> {
  const mc = parseYaml(text) as MachineConfig;
  return new Map(mc.spec.config.storage.files.map((f) => [f.path, Buffer.from(f.contents.source.split(',')[1] ?? '', 'base64').toString('utf8')]));
}

const unitsOf = (text: string) => (parseYaml(text) as MachineConfig).spec.config.systemd?.units ?? [];

/** A path a container is given, on the host under `root`: through the volume it lies on. */
function hostPathOf(pod: PodSpec, container: string, path: string, root: string): string {
  const c = [...(pod.initContainers ?? []), ...pod.containers].find((x) => x.name === container);
  const mount = (c?.volumeMounts ?? []).filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`)).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  if (mount === undefined || volume?.hostPath === undefined) throw new Error(`${container}: ${path} lies on no hostPath volume`);
  return join(root, volume.hostPath.path, path.slice(mount.mountPath.length));
}

/** A kubelet's kubeconfig: the API server named api-int.<domain>, which resolves nowhere. */
async function kubeletKubeconfig(path: string, domain: string, server: { url: string; ca: string; adminToken: string }): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(
    path,
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `https://api-int.${domain}:${new URL(server.url).port}`, 'certificate-authority-data': Buffer.from(server.ca).toString('base64') } }],
      users: [{ name: 'u', user: { token: server.adminToken } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
}

/** Debian's dnsmasq with the shipped configuration, on loopback: its port, addresses and paths moved, nothing else. */
async function startNodeDnsmasq(shipped: string, root: string, upstream: string): Promise<Dnsmasq> {
  const port = await freePort();
  const conf = join(root, 'etc/lbdns/dnsmasq.conf');
  await mkdir(dirname(conf), { recursive: true });
  const lines = shipped.split('\n').flatMap((line) => {
    if (line === 'port=53') return [`port=${port}`];
    if (line === 'bind-dynamic') return ['listen-address=127.0.0.1', 'bind-interfaces'];
    // A resolv.conf cannot name a port: the test's upstream is given as a server line instead.
    if (line.startsWith('resolv-file=')) return ['no-resolv', `server=${upstream.replace(':', '#')}`];
    if (line.startsWith('conf-dir=')) return [`conf-dir=${join(root, line.slice('conf-dir='.length))}`];
    return [line];
  });
  await writeFile(conf, lines.join('\n'));
  return startDnsmasq([`--conf-file=${conf}`], port, 'www.example.org');
}

test('cluster-manifests renders an on-prem cluster\'s MachineConfigs with its API VIP as the first boot\'s seed, in both lbdns containers', async () => {
  await withOnPrem({}, async (c) => {
    const made = await clusterManifests(c.kubeconfig, quiet);
    assert.is(made.variant, 'onprem');
    assert.equal(made.seeds, [API_VIP]);
    for (const [file, text] of made.files) {
      const pod = parseYaml(filesOf(text).get(STATIC_POD_PATH) ?? '') as { spec: PodSpec };
      const seeded = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].filter((x) => x.args?.includes(`--api-int-seed=${API_VIP}`)).map((x) => x.name);
      assert.equal(seeded, ['render-corefile', 'lbdns-monitor'], file);
    }
  });
});

test('make cluster-manifests writes both MachineConfigs to OUT, and without OUT says so and exits 2', async () => {
  await withOnPrem({}, async (c) => {
    const script = fileURLToPath(new URL('../scripts/cluster-manifests.ts', import.meta.url));
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', script, ...args], (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }));
      });
    const missing = await run(['--kubeconfig', c.kubeconfig]);
    assert.equal([missing.code, missing.out.trim()], [2, 'cluster-manifests: --out DIR is required (make cluster-manifests OUT=DIR)']);
    const out = join(c.dir, 'made');
    const made = await run(['--kubeconfig', c.kubeconfig, '--out', out]);
    assert.is(made.code, 0, made.out);
    assert.equal((await readdir(out)).sort(), ['99-master-lbdns.yaml', '99-worker-lbdns.yaml']);
    assert.match(await readFile(join(out, '99-worker-lbdns.yaml'), 'utf8'), /^# Generated by `make cluster-manifests` for metal\.example\.com from manifests\/onprem\//);
  });
});

test("cluster-manifests renders a cloud cluster's MachineConfigs with the internal API LB of the installer's LB config", async () => {
  const c = await startCluster();
  try {
    const made = await clusterManifests(c.kubeconfig, quiet);
    assert.is(made.variant, 'cloud');
    assert.equal(made.seeds, [API_INT_IP]);
    assert.match(filesOf(made.files.get('99-worker-lbdns.yaml') ?? '').get(STATIC_POD_PATH) ?? '', /--role=worker\n\s+- --api-int-seed=/);
  } finally {
    await c.close();
  }
});

interface BootedNode {
  /** What the initContainer printed and how it ended. */
  readonly init: { readonly code: number; readonly stderr: string };
  readonly corednsPort: number;
  readonly dropIn: string;
  readonly units: ReturnType<typeof unitsOf>;
  readonly pod: PodSpec;
  /** Started once the initContainer succeeded. */
  readonly upstream: Awaited<ReturnType<typeof startDnsServer>>;
  /** Runs the initContainer again, as after a pod restart. */
  rerun(): Promise<{ readonly code: number; readonly stderr: string }>;
  coredns?: Awaited<ReturnType<typeof startCoreDns>>;
  dnsmasq?: Awaited<ReturnType<typeof startNodeDnsmasq>>;
}

/**
 * A node's first boot from the cluster's generated master MachineConfig, on an empty host under
 * a temp root: the kubelet's part (volumes, its kubeconfig naming api-int), the initContainer
 * with the pod's own args, then CoreDNS on the Corefile it wrote and, on-prem, dnsmasq as
 * shipped. `upstream`: what the node's upstream resolver answers besides www.example.org.
 */
async function bootNode(c: ClusterFixture, domain: string, upstreamRecords: Readonly<Record<string, readonly string[]>>, body: (node: BootedNode) => Promise<void>): Promise<void> {
  const made = await clusterManifests(c.kubeconfig, quiet);
  const mc = made.files.get('99-master-lbdns.yaml') ?? '';
  const files = filesOf(mc);
  const pod = (parseYaml(files.get(STATIC_POD_PATH) ?? '') as { spec: PodSpec }).spec;
  const init = pod.initContainers?.[0];
  assert.is(init?.name, 'render-corefile');
  const root = await mkdtemp(join(tmpdir(), 'lbdns-node-'));
  const upstream = await startDnsServer();
  upstream.set('www.example.org', { A: ['192.0.2.80'] });
  for (const [name, ips] of Object.entries(upstreamRecords)) upstream.set(name, { A: [...ips] });
  let args: string[] = [];
  const node: { -readonly [K in keyof BootedNode]: BootedNode[K] } = { init: { code: -1, stderr: '' }, corednsPort: await freePort(), dropIn: join(root, DNSMASQ_DIR, 'lbdns.conf'), units: unitsOf(mc), pod, upstream, rerun: () => runLbdns(args) };
  try {
    const servicePorts = [`--health-port=${await freePort()}`, `--ready-port=${await freePort()}`];
    const listen = [`--listen=127.0.0.1:${node.corednsPort}`, ...servicePorts];
    args = (init?.args ?? []).flatMap((arg): string[] => {
      if (arg === '/var/lib/kubelet/kubeconfig') return [hostPathOf(pod, 'render-corefile', arg, root)];
      const [flag, value] = arg.split(/=(.*)/s) as [string, string | undefined];
      // NetworkManager's resolv.conf cannot name the test upstream's port: lbdns is told it directly.
      if (flag === '--resolv-conf') return ['--upstream', upstream.address];
      if (flag === '--listen') return listen;
      if ((flag === '--out' || flag === '--dnsmasq-out') && value !== undefined) return [`${flag}=${hostPathOf(pod, 'render-corefile', value, root)}`];
      if (flag === '--wait-timeout') return ['--wait-timeout=20s'];
      return [arg];
    });
    // The cloud pod's CoreDNS takes port 53 on every address; here a loopback port of its own.
    if (!(init?.args ?? []).some((a) => a.startsWith('--listen='))) args.push(...listen);
    // What the kubelet does for the pod: the DirectoryOrCreate volumes exist before a container starts.
    for (const v of pod.volumes ?? []) if (v.hostPath?.type === 'DirectoryOrCreate') await mkdir(join(root, v.hostPath.path), { recursive: true });
    await kubeletKubeconfig(hostPathOf(pod, 'render-corefile', '/var/lib/kubelet/kubeconfig', root), domain, { url: c.server.url, ca: c.server.ca, adminToken: c.server.adminToken });
    node.init = await runLbdns(args);
    if (node.init.code === 0) {
      node.coredns = await startCoreDns(hostPathOf(pod, 'render-corefile', '/etc/coredns/Corefile', root), { port: node.corednsPort });
      const dnsmasqConf = files.get('/etc/lbdns/dnsmasq.conf');
      if (dnsmasqConf !== undefined) node.dnsmasq = await startNodeDnsmasq(dnsmasqConf, root, upstream.address);
    }
    await body(node);
  } finally {
    await node.dnsmasq?.stop();
    await node.coredns?.close();
    await upstream.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** An on-prem cluster whose API VIP is this machine's loopback, where its API server answers for api-int. */
const ON_PREM_NODE = { own: { sans: [`api-int.${DOMAIN}`] }, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } } as const;

test('cluster-manifests refuses a cloud cluster whose dnsType is not ClusterHosted, naming the field: its pods would exit 2', async () => {
  const c = await startCluster({ platformStatus: { type: 'AWS', aws: { region: 'us-east-1', cloudLoadBalancerConfig: { dnsType: 'PlatformDefault' } } } });
  try {
    await clusterManifests(c.kubeconfig, quiet).then(
      () => assert.unreachable('rendered'),
      (err: Error) => assert.match(err.message, /^status\.platformStatus\.aws\.cloudLoadBalancerConfig\.dnsType is PlatformDefault: /),
    );
  } finally {
    await c.close();
  }
});

test("a new on-prem node from an empty host: the seeded initContainer renders the Corefile and the dnsmasq drop-in, and the node's dnsmasq as shipped answers api-int with CoreDNS down, sends the other names where they belong and caches none of CoreDNS's answers", async () => {
  await withOnPrem(ON_PREM_NODE, (c) =>
    bootNode(c, DOMAIN, {}, async (node) => {
      // The drop-in names its hosts directory by path, which the node's dnsmasq must find: the container's path is the host's.
      const mount = node.pod.initContainers?.[0]?.volumeMounts?.find((m) => m.mountPath === DNSMASQ_DIR);
      assert.is(node.pod.volumes?.find((v) => v.name === mount?.name)?.hostPath?.path, DNSMASQ_DIR);
      const service = node.units.find((u) => u.name === 'lbdns-dnsmasq.service');
      assert.ok(service?.enabled, 'dnsmasq is enabled at boot');
      assert.match(service?.contents ?? '', /^ExecStart=\/usr\/sbin\/dnsmasq --keep-in-foreground --conf-file=\/etc\/lbdns\/dnsmasq.conf$/m);
      assert.match(node.units.find((u) => u.name === 'lbdns-dnsmasq-config.path')?.contents ?? '', new RegExp(`^PathChanged=${DNSMASQ_DIR}/lbdns.conf$`, 'm'));

      assert.is(node.init.code, 0, node.init.stderr);
      assert.ok(logLines(node.init.stderr).some((l) => String(l.msg).startsWith('no Corefile serves api-int yet (a first boot)')), 'the API server was found through the seed');
      assert.match(await readFile(node.dropIn, 'utf8'), new RegExp(`^server=/${DOMAIN}/127.0.0.1#${node.corednsPort}$`, 'm'));
      const dns = node.dnsmasq?.resolver;
      assert.ok(dns);
      assert.equal(await dns.resolve4(`api-int.${DOMAIN}`), ['127.0.0.1'], 'api-int from the hosts file lbdns keeps');
      assert.equal(await dns.resolve4(`x.apps.${DOMAIN}`), [INGRESS_VIP], '*.apps through CoreDNS');
      assert.equal(await dns.resolve4(`master-0.${DOMAIN}`), ['192.168.111.20'], 'node names through CoreDNS');
      assert.equal(await dns.resolve4('www.example.org'), ['192.0.2.80'], 'other names to the upstreams NetworkManager learned');

      // The ingress VIP moves: once CoreDNS answers the new one, so does dnsmasq, for a name it was just asked.
      await c.server.patchStatus({ resource: 'infrastructures', name: 'cluster' }, { platformStatus: { baremetal: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: ['192.168.111.40'] } } });
      const rerun = await node.rerun();
      assert.is(rerun.code, 0, rerun.stderr);
      const coredns = node.coredns?.resolver();
      await until('CoreDNS answers the new VIP', async () => (await coredns?.resolve4(`x.apps.${DOMAIN}`).catch(() => []))?.[0] === '192.168.111.40', 6000);
      assert.equal(await dns.resolve4(`x.apps.${DOMAIN}`), ['192.168.111.40'], 'nothing cached in dnsmasq');

      await node.coredns?.close();
      node.coredns = undefined;
      assert.equal(await dns.resolve4(`api-int.${DOMAIN}`), ['127.0.0.1'], 'api-int with CoreDNS down');
      const started = Date.now();
      const aaaa = await dns.resolve6(`api-int.${DOMAIN}`).then(() => 'answered', (e: NodeJS.ErrnoException) => e.code);
      assert.is(aaaa, 'ENODATA');
      assert.ok(Date.now() - started < 300, 'AAAA answered at once, not forwarded to the CoreDNS that is down');
    }),
  );
});

/**
 * The Corefile the MCO's on-prem stack serves on every node, in the shape of its
 * coredns-corefile template (templates/common/on-prem in openshift/machine-config-operator),
 * with this cluster's VIPs: what a node answered before the move.
 */
function mcoOnPremCorefile(apiVip: string, ingressVip: string, upstream: string): string {
  const block = (type: string, match: string, answer?: string) =>
    `    template IN ${type} ${DOMAIN} {\n        match ${match}\n${answer === undefined ? '' : `        answer "{{ .Name }} 60 in {{ .Type }} ${answer}"\n`}        fallthrough\n    }\n`;
  return (
    `. {\n    errors\n    bufsize 512\n    forward . ${upstream} {\n        policy sequential\n    }\n    cache 30\n    reload\n` +
    block('A', `.*.apps.${DOMAIN}`, ingressVip) +
    block('AAAA', `.*.apps.${DOMAIN}`) +
    block('A', `^api.${DOMAIN}`, apiVip) +
    block('AAAA', `^api.${DOMAIN}`) +
    block('A', `^api-int.${DOMAIN}`, apiVip) +
    block('AAAA', `^api-int.${DOMAIN}`) +
    '}\n'
  );
}

/** rcode and record data, owner and TTL left out: what a client acts on. */
async function seen(server: { host: string; port: number }, name: string, type: 'A' | 'AAAA'): Promise<string> {
  const reply = await query(server, name, type);
  return `${reply.rcode} ${reply.answers.map((a) => a.split(' ').slice(2).join(' ')).sort().join(', ')}`;
}

test("moving a node from the MCO's on-prem stack changes no answer a client acts on: api, api-int and *.apps, A and AAAA, from lbdns's layout as from MCO's CoreDNS", async () => {
  await withOnPrem(ON_PREM_NODE, (c) =>
    bootNode(c, DOMAIN, {}, async (node) => {
      assert.is(node.init.code, 0, node.init.stderr);
      const dir = await mkdtemp(join(tmpdir(), 'lbdns-mco-'));
      await writeFile(join(dir, 'Corefile'), mcoOnPremCorefile('127.0.0.1', INGRESS_VIP, '127.0.0.1:9'));
      const mco = await startCoreDns(join(dir, 'Corefile'));
      try {
        const lbdnsNode = { host: '127.0.0.1', port: Number(node.dnsmasq?.address.split(':')[1]) };
        assert.is(await seen(mco, `api-int.${DOMAIN}`, 'A'), 'NOERROR A 127.0.0.1');
        assert.is(await seen(mco, `console.apps.${DOMAIN}`, 'AAAA'), 'NOERROR ', 'an empty answer, as lbdns gives');
        for (const name of [`api.${DOMAIN}`, `api-int.${DOMAIN}`, `console.apps.${DOMAIN}`]) {
          for (const type of ['A', 'AAAA'] as const) {
            assert.is(await seen(lbdnsNode, name, type), await seen(mco, name, type), `${name} ${type}`);
          }
        }
      } finally {
        await mco.close();
        await rm(dir, { recursive: true, force: true });
      }
    }),
  );
});

test("a new cloud node from an empty host: the seed cluster-manifests took from the LB config (an NLB's host name) is resolved through the upstream, the API server reached there, and the Corefile served", async () => {
  const nlb = 'internal-c1-int-0123.elb.us-east-1.amazonaws.com';
  const c = await startCluster({ own: { sans: [`api-int.${CLOUD_DOMAIN}`] } });
  try {
    await c.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': nlb } });
    await bootNode(c, CLOUD_DOMAIN, { [nlb]: ['127.0.0.1'] }, async (node) => {
      assert.ok(node.pod.initContainers?.[0]?.args?.includes(`--api-int-seed=${nlb}`), 'the seed is the NLB');
      assert.is(node.init.code, 0, node.init.stderr);
      assert.ok(node.upstream.queries(nlb, 'A') >= 1, 'the seed asked of the upstream');
      assert.ok(logLines(node.init.stderr).some((l) => String(l.msg).startsWith('no Corefile serves api-int yet (a first boot)')), 'the API server was found through the seed');
      const dns = node.coredns?.resolver();
      assert.ok(dns);
      assert.equal(await dns.resolve4(`api-int.${CLOUD_DOMAIN}`), ['127.0.0.1'], "api-int: the NLB's addresses, from the cluster");
      assert.equal(await dns.resolve4(`master-0.${CLOUD_DOMAIN}`), ['10.0.0.5']);
      assert.is(node.dnsmasq, undefined, 'no dnsmasq off-prem');
    });
  } finally {
    await c.close();
  }
});

test.run();
