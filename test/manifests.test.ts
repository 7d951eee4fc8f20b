import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildCli } from '../cmd/cli.js';
import { ClusterCommand } from '../cmd/options.js';
import { UpdateInfraStatusCommand } from '../cmd/update-infra-status.js';
import { WatchLbStatusCommand } from '../cmd/watch-lb-status.js';
import { ConfigError, ValidationError } from '../lib/errors.js';
import { parseListenAddress } from '../lib/runtime/health-server.js';
import { DEFAULTS } from '../lib/model.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { sharedApiServer } from './support/apiserver.js';
import type { KubeObject } from './support/kube-api-server.js';
import {
  containersOf,
  describe,
  lbdnsContainers,
  loadManifests,
  MANIFEST_DIR,
  mountOf,
  workloads,
  type Container,
  type Manifest,
  type ContainerRef,
  type HttpProbe,
  type Workload,
} from './support/manifests.js';
import { runLbdns } from './support/run-cli.js';

const manifests = loadManifests();
const pods = workloads(manifests);
const lbdns = lbdnsContainers(pods);

/** The fields every command that can read the cluster has; `out` and `metricsAddr` where the command has them. */
type Parsed = ClusterCommand & { out?: string; metricsAddr?: string };

/**
 * What lbdns does with a container's args before touching a file or the network: parse them
 * with the CLI's own parser (an unknown flag, a missing value or an unknown command throws),
 * then check every value that can be judged alone (`checkFlags`, which each command also
 * runs first).
 */
function parseArgs(args: readonly string[]): Parsed {
  const command = buildCli(args).process([...args]);
  if (!(command instanceof ClusterCommand)) throw new Error(`${JSON.stringify(args)} does not run an lbdns command`);
  command.checkFlags();
  return command as Parsed;
}

const argsOf = (ref: ContainerRef): string[] => [...(ref.container.args ?? [])];
const kubeconfigOf = (p: Parsed): string | undefined => p.kubeconfig ?? p.kubeconfigArg;
const isCoreDns = (c: Container): boolean => c.image?.includes('/coredns/coredns:') === true;
const runsUntilStopped = (p: Parsed): boolean => p instanceof WatchLbStatusCommand || (p instanceof UpdateInfraStatusCommand && p.watch);

function only<T>(items: readonly T[], what: string): T {
  assert.is(items.length, 1, `expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

function lbdnsIn(workload: Workload): (ContainerRef & { parsed: Parsed })[] {
  return lbdns.filter((ref) => ref.workload === workload).map((ref) => ({ ...ref, parsed: parseArgs(argsOf(ref)) }));
}

function withArg(args: readonly string[], flag: string, replacement: string): string[] {
  const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  assert.ok(i >= 0, `${flag} is in ${JSON.stringify(args)}`);
  return [...args.slice(0, i), replacement, ...args.slice(i + 1)];
}

function throwsWith(fn: () => unknown, type: new (...args: never[]) => Error, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, type, `threw ${(err as Error).name}: ${(err as Error).message}`);
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected ${type.name} matching ${pattern}`);
}

const controlPlane = only(pods.filter((w) => w.manifest.file === 'static-pod-control-plane.yaml'), 'control-plane static pod');
const bootstrap = only(pods.filter((w) => w.manifest.file === 'static-pod-bootstrap.yaml'), 'bootstrap static pod');
const worker = only(pods.filter((w) => w.manifest.file === 'static-pod-worker.yaml'), 'worker static pod');
const staticPods = pods.filter((w) => w.manifest.object.kind === 'Pod');

test('the manifests hold the three static pods, their RBAC and the update-infra-status Deployment', () => {
  assert.equal(staticPods.map((w) => w.label), [bootstrap.label, controlPlane.label, worker.label]);
  assert.ok(manifests.some((m) => m.file === 'rbac.yaml' && m.object.kind === 'ClusterRoleBinding'));
  assert.ok(pods.some((w) => w.manifest.object.kind === 'Deployment' && lbdnsIn(w).some((c) => c.parsed instanceof UpdateInfraStatusCommand)));
});

for (const ref of lbdns) {
  test(`${ref.label}: runs lbdns with args its own parser accepts and values it accepts`, () => {
    assert.equal(ref.container.command, ['lbdns']);
    parseArgs(argsOf(ref));
  });
}

const RENDER_ARGS = argsOf(only(lbdns.filter((r) => r.workload === controlPlane && r.init), 'control-plane initContainer'));
const MONITOR_ARGS = argsOf(only(lbdns.filter((r) => r.workload === controlPlane && !r.init), 'control-plane monitor'));
const UPDATE_ARGS = argsOf(only(lbdns.filter((r) => r.workload.manifest.object.kind === 'Deployment'), 'update-infra-status container'));

test("every manifest declaring lbdns's Namespace gives it the cluster-monitoring label: applied after another, it would remove the label", () => {
  const namespaces = manifests.filter((m) => m.object.kind === 'Namespace');
  assert.ok(namespaces.length >= 2, namespaces.map(describe).join(', '));
  for (const m of namespaces) {
    const labels = (m.object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
    assert.is(labels['openshift.io/cluster-monitoring'], 'true', describe(m));
  }
});

test('the args check refuses a misspelt flag, a missing value and an unknown command', () => {
  assert.throws(() => parseArgs(withArg(RENDER_ARGS, '--role', '--rol=control-plane')), /Command not found[\s\S]*While running render-corefile .*--rol=control-plane/);
  assert.throws(() => parseArgs([...RENDER_ARGS.filter((a) => !a.startsWith('--out=')), '--out']), /While running render-corefile .* --out$/);
  assert.throws(() => parseArgs(['render-corefiles', ...RENDER_ARGS.slice(1)]), /^Command not found[\s\S]*While running render-corefiles /);
});

test('the args check refuses values lbdns would refuse: role, wait timeout, listen address, fields, object refs', () => {
  throwsWith(() => parseArgs(withArg(RENDER_ARGS, '--role', '--role=x')), ValidationError, /^--role: "x" is not a role/);
  throwsWith(() => parseArgs(withArg(RENDER_ARGS, '--wait-timeout', '--wait-timeout=banana')), ValidationError, /^--wait-timeout: "banana" is not a duration/);
  throwsWith(() => parseArgs(withArg(MONITOR_ARGS, '--metrics-addr', '--metrics-addr=18082')), ConfigError, /^--metrics-addr "18082": not HOST:PORT/);
  throwsWith(() => parseArgs(withArg(UPDATE_ARGS, '--fields', '--fields=api,dns')), ValidationError, /^--fields: "dns" is not a list lbdns owns/);
  throwsWith(() => parseArgs([...RENDER_ARGS, '--ingress-service=router-default']), ValidationError, /^--ingress-service: "router-default" is not NAMESPACE\/NAME/);
  throwsWith(() => parseArgs([...RENDER_ARGS, '--upstream=dns.example.net:53']), ValidationError, /^--upstream: "dns\.example\.net:53" is not IP or IP:PORT/);
});

test('a bad flag value fails the command at once, before it reads a file or the cluster', async () => {
  const args = withArg(withArg(RENDER_ARGS, '--wait-timeout', '--wait-timeout=banana'), '/var/lib/kubelet/kubeconfig', '/nonexistent/kubeconfig');
  const r = await runLbdns(args);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, 'lbdns: error: --wait-timeout: "banana" is not a duration');
  assert.not.match(r.stderr, 'kubeconfig');
});

test('pod containers run until stopped and initContainers finish: no one-shot command crash-loops as a container', () => {
  for (const ref of lbdns) {
    const parsed = parseArgs(argsOf(ref));
    assert.is(runsUntilStopped(parsed), !ref.init, `${ref.label}: ${ref.init ? 'an initContainer must finish' : 'a container must keep running'}`);
  }
});

test('every lbdns container reads the cluster: static pods through a kubeconfig file, a ServiceAccount pod through --cluster', () => {
  for (const ref of lbdns) {
    const parsed = parseArgs(argsOf(ref));
    if (ref.workload.manifest.object.kind === 'Pod') {
      assert.ok(kubeconfigOf(parsed), `${ref.label}: a static pod has no ServiceAccount; it needs a kubeconfig`);
    } else {
      assert.ok(parsed.cluster, `${ref.label}: needs --cluster to use its ServiceAccount`);
      assert.ok(ref.workload.spec.serviceAccountName, `${ref.label}: names no ServiceAccount`);
    }
  }
});

test('the control-plane pod renders and monitors as control-plane with the same inputs', () => {
  const [render, monitor] = lbdnsIn(controlPlane);
  assert.ok(render?.init && monitor && !monitor.init);
  const inputs = (p: Parsed) => ({
    role: p.role,
    kubeconfig: kubeconfigOf(p),
    resolvConf: p.resolvConf,
    out: p.out,
    template: p.template,
    config: p.config,
    domain: p.domain,
    ingressService: p.ingressService,
    lbConfig: p.lbConfig,
  });
  assert.is(render.parsed.role, 'control-plane');
  assert.equal(inputs(monitor.parsed), inputs(render.parsed));
});

test('the bootstrap pod renders and monitors as bootstrap with the same inputs, so it gains *.apps when the ingress LB appears', () => {
  const [render, monitor] = lbdnsIn(bootstrap);
  assert.ok(render?.init && monitor && !monitor.init);
  assert.equal([render.parsed.role, monitor.parsed.role], ['bootstrap', 'bootstrap']);
  const inputs = (p: Parsed) => ({ kubeconfig: kubeconfigOf(p), resolvConf: p.resolvConf, out: p.out, template: p.template, config: p.config, domain: p.domain });
  assert.equal(inputs(monitor.parsed), inputs(render.parsed));
  assert.equal(bootstrap.spec.containers.map((c) => isCoreDns(c)), [true, false]);
});

test('the worker pod is the control-plane pod with --role=worker', () => {
  assert.equal(lbdnsIn(worker).map((c) => c.parsed.role), ['worker', 'worker']);
  const asControlPlane = JSON.parse(JSON.stringify(worker.spec).replaceAll('--role=worker', '--role=control-plane')) as unknown;
  assert.equal(asControlPlane, JSON.parse(JSON.stringify(controlPlane.spec)));
});

test("the bring-your-own-DNS pod is the control-plane pod with --role=apps-only, which never needs api-int", async () => {
  const object = parseYaml(await readFile(join(MANIFEST_DIR, 'byo/static-pod-apps-only.yaml'), 'utf8')) as Manifest['object'];
  const [byo] = workloads([{ file: 'byo/static-pod-apps-only.yaml', object }]);
  assert.ok(byo);
  assert.equal(lbdnsContainers([byo]).map((ref) => parseArgs(argsOf(ref)).role), ['apps-only', 'apps-only']);
  const asControlPlane = JSON.parse(JSON.stringify(byo.spec).replaceAll('--role=apps-only', '--role=control-plane')) as unknown;
  assert.equal(asControlPlane, JSON.parse(JSON.stringify(controlPlane.spec)));
});

test("the on-prem pods are the cloud pods with CoreDNS on 127.0.0.1:5353, without NET_BIND_SERVICE, and both lbdns containers keeping the node dnsmasq's drop-in on a volume at the host's own path", async () => {
  for (const [file, role] of [['onprem/static-pod-control-plane.yaml', 'control-plane'], ['onprem/static-pod-worker.yaml', 'worker']] as const) {
    const object = parseYaml(await readFile(join(MANIFEST_DIR, file), 'utf8')) as Manifest['object'];
    const [pod] = workloads([{ file, object }]);
    assert.ok(pod);
    const refs = lbdnsContainers([pod]);
    assert.equal(refs.map((ref) => parseArgs(argsOf(ref)).role), [role, role]);
    for (const ref of refs) {
      const args = argsOf(ref);
      assert.ok(args.includes('--listen=127.0.0.1:5353'), ref.label);
      const dropIn = args.find((a) => a.startsWith('--dnsmasq-out='))?.slice('--dnsmasq-out='.length) ?? '';
      const on = mountOf(ref.container, dropIn);
      assert.ok(on, `${ref.label}: ${dropIn} lies on a volume`);
      assert.is(pod.spec.volumes?.find((v) => v.name === on?.mount.name)?.hostPath?.path, on?.mount.mountPath, 'the drop-in names its hosts directory by path: the same on the host');
    }
    const coredns = only(pod.spec.containers.filter(isCoreDns), `CoreDNS container in ${file}`);
    assert.equal(coredns.securityContext?.capabilities, { drop: ['ALL'] }, 'on port 5353 CoreDNS needs no capability');
    const cloud = only(staticPods.filter((p) => p.manifest.file === `static-pod-${role}.yaml`), `static-pod-${role}.yaml`);
    const withoutBindCapability = JSON.parse(JSON.stringify(cloud.spec, (key, value: unknown) => (key === 'add' ? undefined : value))) as unknown;
    const withoutLayout = JSON.parse(
      JSON.stringify(pod.spec, (key, value: unknown) => {
        if (key === 'args' && Array.isArray(value)) return value.filter((a) => a !== '--listen=127.0.0.1:5353' && !String(a).startsWith('--dnsmasq-out='));
        if ((key === 'volumeMounts' || key === 'volumes') && Array.isArray(value)) return value.filter((v: { name?: string }) => v.name !== 'dnsmasq');
        return value;
      }),
    ) as unknown;
    assert.equal(withoutLayout, withoutBindCapability, `${file}: nothing else differs`);
  }
});

test('static pods use the host network, are node-critical and tolerate every taint', () => {
  for (const pod of staticPods) {
    assert.is(pod.spec.hostNetwork, true, pod.label);
    assert.is(pod.spec.priorityClassName, 'system-node-critical', pod.label);
    assert.ok(pod.spec.tolerations?.some((t) => t.operator === 'Exists' && t.key === undefined && t.effect === undefined), `${pod.label}: tolerates everything`);
  }
});

test('CoreDNS reads the Corefile the lbdns containers write, through one volume all of them mount', () => {
  for (const pod of staticPods) {
    const coredns = only(pod.spec.containers.filter(isCoreDns), `CoreDNS container in ${pod.label}`);
    const args = coredns.args ?? [];
    const conf = args[args.indexOf('-conf') + 1];
    assert.ok(args.includes('-conf') && conf, `${pod.label}: CoreDNS runs with -conf FILE`);
    const read = mountOf(coredns, conf);
    assert.ok(read, `${pod.label}: -conf ${conf} is on no volume`);
    const writers = lbdnsIn(pod).filter((c) => c.parsed.out !== undefined);
    assert.ok(writers.some((w) => w.init), `${pod.label}: an initContainer writes the first Corefile`);
    for (const writer of writers) {
      const written = mountOf(writer.container, writer.parsed.out ?? '');
      assert.ok(written, `${writer.label}: --out ${writer.parsed.out} is on no volume`);
      assert.is(written.mount.name, read.mount.name, `${writer.label} writes to the volume CoreDNS reads`);
      assert.is(written.relative, read.relative, `${writer.label}: --out is the file CoreDNS's -conf names`);
      assert.not.ok(written.mount.readOnly, `${writer.label}: its Corefile volume is writable`);
    }
    const volume = pod.spec.volumes?.find((v) => v.name === read.mount.name);
    // A kept Corefile must outlive the pod: on the host wherever the initContainer keeps it when the API is away.
    const keeps = writers.some((w) => w.init && w.container.args?.includes('--if-unreachable=keep'));
    if (keeps) assert.is(volume?.hostPath?.path, '/var/lib/lbdns', `${pod.label}: the kept Corefile lives on the host`);
    else assert.ok(volume?.emptyDir, `${pod.label}: the Corefile volume is the pod's own emptyDir`);
  }
});

/** A probe's HTTP GET as the kubelet would send it. */
function probeTarget(probe: HttpProbe | undefined): { host: string | undefined; path: string | undefined; port: number | string | undefined } {
  return { host: probe?.httpGet?.host, path: probe?.httpGet?.path, port: probe?.httpGet?.port };
}

test('CoreDNS is probed on the health and ready ports the rendered Corefile opens', async () => {
  const r = await runLbdns(['render-corefile', '--example']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, `\n    health :${DEFAULTS.healthPort}\n`);
  assert.match(r.stdout, `\n    ready :${DEFAULTS.readyPort}\n`);
  for (const pod of staticPods) {
    const coredns = only(pod.spec.containers.filter(isCoreDns), 'CoreDNS container');
    assert.equal(probeTarget(coredns.livenessProbe), { host: undefined, path: '/health', port: DEFAULTS.healthPort }, pod.label);
    assert.equal(probeTarget(coredns.readinessProbe), { host: undefined, path: '/ready', port: DEFAULTS.readyPort }, pod.label);
  }
});

test('long-running lbdns containers are probed on the --metrics-addr they listen on', () => {
  const watchers = lbdns.map((ref) => ({ ref, parsed: parseArgs(argsOf(ref)) })).filter(({ parsed }) => runsUntilStopped(parsed));
  assert.is(watchers.length, 4);
  for (const { ref, parsed } of watchers) {
    const { host, port } = parseListenAddress(parsed.metricsAddr ?? '');
    const loopback = host.startsWith('127.') || host === '::1';
    // A loopback listener is reachable by the kubelet only on the host network, and only if the probe names it.
    if (loopback) assert.ok(ref.workload.spec.hostNetwork, `${ref.label}: listens on loopback but has its own network namespace`);
    const probeHost = loopback ? host : undefined;
    assert.equal(probeTarget(ref.container.livenessProbe), { host: probeHost, path: '/healthz', port }, ref.label);
    assert.equal(probeTarget(ref.container.readinessProbe), { host: probeHost, path: '/readyz', port }, ref.label);
  }
});

test('every file an lbdns container is given lies on a volume it mounts, resolv.conf through its directory', () => {
  for (const ref of lbdns) {
    const parsed = parseArgs(argsOf(ref));
    const files = { kubeconfig: kubeconfigOf(parsed), '--resolv-conf': parsed.resolvConf, '--out': parsed.out, '--template': parsed.template, '--config': parsed.config };
    for (const [flag, path] of Object.entries(files)) {
      if (path === undefined || path === '-') continue;
      assert.ok(mountOf(ref.container, path), `${ref.label}: ${flag} ${path} is on no volume (the root filesystem is the image's, read-only)`);
    }
    if (parsed.resolvConf !== undefined) {
      // A file bind mount keeps the inode it was given; the resolver's rename of a new file would never show.
      const mounted = mountOf(ref.container, parsed.resolvConf);
      assert.ok(mounted?.relative, `${ref.label}: --resolv-conf ${parsed.resolvConf} is mounted as a file, not through its directory`);
      const volume = ref.workload.spec.volumes?.find((v) => v.name === mounted.mount.name);
      assert.is(volume?.hostPath?.type, 'Directory', `${ref.label}: the resolv.conf volume is a host directory`);
    }
  }
});

test('every container runs with a read-only root, no privilege escalation and no capability but CoreDNS\'s NET_BIND_SERVICE', () => {
  for (const ref of pods.flatMap(containersOf)) {
    const sc = ref.container.securityContext;
    assert.is(sc?.readOnlyRootFilesystem, true, `${ref.label}: readOnlyRootFilesystem`);
    assert.is(sc?.allowPrivilegeEscalation, false, `${ref.label}: allowPrivilegeEscalation`);
    assert.equal(sc?.capabilities?.drop, ['ALL'], `${ref.label}: drops every capability`);
    assert.equal(sc?.capabilities?.add ?? [], isCoreDns(ref.container) ? ['NET_BIND_SERVICE'] : [], `${ref.label}: added capabilities`);
  }
});

test('the real kube-apiserver accepts every manifest: server-side apply, dry run, strict field validation', async () => {
  const server = await sharedApiServer();
  await server.reset();
  const otherPlatforms = (['gcp', 'azure'] as const).flatMap((p) => loadManifests(p).filter((m) => m.file.startsWith('platform/')));
  for (const m of [...manifests, ...otherPlatforms]) {
    const applied = await server.dryRunApply(m.object as KubeObject).catch((err: Error) => {
      throw new Error(`${describe(m)}: ${err.message}`);
    });
    assert.is(applied.metadata.name, m.object.metadata?.name, describe(m));
  }
});

test.run();
