/**
 * Delivered the OpenShift way: the Machine Config Operator places lbdns's files on every
 * master and worker, so a replaced or added node gets them too. The MachineConfigs are
 * generated from manifests/ (one source of truth), pass the real MachineConfig CRD's
 * validation, and carry exactly the files they are made from.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load as parseYaml } from 'js-yaml';
import { BYO_POD, generatedManifests, MACHINE_ROLES, MANIFEST_DIR, nodeFiles, nodeUnits, STATIC_POD_PATH, VARIANTS, type MachineRole } from '../scripts/manifests.js';
import { sharedApiServer } from './support/apiserver.js';
import type { KubeObject } from './support/kube-api-server.js';

const run = promisify(execFile);
const ROLES = Object.keys(MACHINE_ROLES) as MachineRole[];
const DISPATCHER = join(MANIFEST_DIR, 'node/etc/NetworkManager/dispatcher.d/30-lbdns-resolv-prepender');

interface MachineConfig extends KubeObject {
  readonly spec: {
    readonly config: {
      readonly ignition: { readonly version: string };
      readonly storage: { readonly files: readonly { path: string; mode: number; overwrite: boolean; contents: { source: string } }[] };
      readonly systemd?: { readonly units: readonly { name: string; enabled?: boolean; contents: string }[] };
    };
  };
}

const machineConfig = async (role: MachineRole, variant = ''): Promise<MachineConfig> => parseYaml(await readFile(join(MANIFEST_DIR, `${variant}machineconfigs/99-${role}-lbdns.yaml`), 'utf8')) as MachineConfig;

test('every derived manifest is what `make manifests` generates from its sources', async () => {
  for (const [file, text] of generatedManifests()) {
    assert.is(await readFile(join(MANIFEST_DIR, file), 'utf8'), text, `manifests/${file} drifted from its sources: run "make manifests"`);
  }
});

test('the real kube-apiserver accepts each MachineConfig under the real MachineConfig CRD (server-side apply, dry run, strict)', async () => {
  const server = await sharedApiServer();
  await server.reset();
  for (const variant of Object.values(VARIANTS)) {
    for (const role of ROLES) {
      const applied = await server.dryRunApply<MachineConfig>(await machineConfig(role, variant.dir));
      assert.is(applied.metadata?.labels?.['machineconfiguration.openshift.io/role'], role);
      assert.is(applied.spec.config.storage.files.length, nodeFiles(role, new Map(), variant).length, 'no file pruned');
      assert.equal(applied.spec.config.systemd?.units.map((u) => u.name) ?? [], nodeUnits(variant).map((u) => u.name), 'no unit pruned');
    }
  }
});

test("each MachineConfig's Ignition files decode to the role's static pod and the node files, with their modes", async () => {
  for (const role of ROLES) {
    const mc = await machineConfig(role);
    assert.match(mc.spec.config.ignition.version, /^3\./);
    const decoded = mc.spec.config.storage.files.map((f) => {
      const m = /^data:text\/plain;charset=utf-8;base64,(.*)$/.exec(f.contents.source);
      assert.ok(m, `${f.path}: an inline base64 data URL`);
      return { path: f.path, mode: f.mode, contents: Buffer.from(m![1] ?? '', 'base64').toString('utf8') };
    });
    const expected = nodeFiles(role).map(({ path, mode, contents }) => ({ path, mode, contents }));
    assert.equal(decoded, expected);
    const pod = decoded.find((f) => f.path === STATIC_POD_PATH);
    assert.is(pod?.contents, await readFile(join(MANIFEST_DIR, MACHINE_ROLES[role]), 'utf8'));
    assert.is(decoded.find((f) => f.path.endsWith('30-lbdns-resolv-prepender'))?.mode, 0o755);
  }
});

test("the bring-your-own-DNS MachineConfigs give masters and workers the apps-only pod and the same node files", async () => {
  for (const role of ROLES) {
    const mc = await machineConfig(role, 'byo/');
    const decoded = mc.spec.config.storage.files.map((f) => ({ path: f.path, contents: Buffer.from(f.contents.source.split(',')[1] ?? '', 'base64').toString('utf8') }));
    assert.equal(decoded.map((f) => f.path), nodeFiles(role).map((f) => f.path));
    assert.is(decoded.find((f) => f.path === STATIC_POD_PATH)?.contents, await readFile(join(MANIFEST_DIR, BYO_POD), 'utf8'));
  }
});

test("the on-prem MachineConfigs add the node's dnsmasq: its configuration, and its units, the service and the path units enabled", async () => {
  for (const role of ROLES) {
    const mc = await machineConfig(role, 'onprem/');
    const paths = mc.spec.config.storage.files.map((f) => f.path);
    assert.equal(paths, nodeFiles(role, new Map(), VARIANTS.onprem).map((f) => f.path));
    assert.ok(paths.includes('/etc/lbdns/dnsmasq.conf') && paths.some((p) => p.endsWith('30-lbdns-resolv-prepender')), paths.join(' '));
    assert.equal(mc.spec.config.systemd?.units.map((u) => [u.name, u.enabled ?? false]), [['lbdns-dnsmasq-config.path', true], ['lbdns-dnsmasq-hosts.path', true], ['lbdns-dnsmasq-reload.service', false], ['lbdns-dnsmasq-restart.service', false], ['lbdns-dnsmasq.service', true]]);
  }
});

test("Debian's dnsmasq accepts the node dnsmasq's configuration as shipped, in the directory its unit makes", async () => {
  const conf = await readFile(join(MANIFEST_DIR, 'onprem/node/etc/lbdns/dnsmasq.conf'), 'utf8');
  const unit = await readFile(join(MANIFEST_DIR, 'onprem/systemd/lbdns-dnsmasq.service'), 'utf8');
  const stateDir = /^StateDirectory=(\S+)$/m.exec(unit)?.[1];
  assert.match(conf, new RegExp(`^conf-dir=/var/lib/${stateDir},\\*\\.conf$`, 'm'), 'the drop-in directory is the one systemd makes before dnsmasq starts');
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-dnsmasq-conf-'));
  try {
    await mkdir(join(dir, stateDir ?? ''));
    await writeFile(join(dir, 'dnsmasq.conf'), conf.replace('conf-dir=/var/lib/', `conf-dir=${dir}/`));
    await run('/usr/sbin/dnsmasq', ['--test', `--conf-file=${join(dir, 'dnsmasq.conf')}`]).catch((err: NodeJS.ErrnoException & { stderr?: string }) => {
      if (err.code === 'ENOENT') throw new Error('dnsmasq is not installed: run "make test-deps" (as root; installs dnsmasq-base), which "make test" does');
      throw new Error(`dnsmasq --test:\n${err.stderr ?? ''}`);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('systemd-analyze verifies the on-prem units: their syntax, the programs they run and the units they name', async () => {
  const dir = join(MANIFEST_DIR, VARIANTS.onprem.units);
  await run('systemd-analyze', ['verify', ...nodeUnits(VARIANTS.onprem).map((u) => join(dir, u.name))]).catch((err: NodeJS.ErrnoException & { stderr?: string }) => {
    if (err.code === 'ENOENT') throw new Error('systemd-analyze is not installed: run "make test-deps" (as root; installs systemd), which "make test" does');
    throw new Error(`systemd-analyze verify:\n${err.stderr ?? ''}`);
  });
});

test('shellcheck finds nothing in the NetworkManager dispatcher script', async () => {
  await run('shellcheck', [DISPATCHER]).catch((err: NodeJS.ErrnoException & { stdout?: string }) => {
    if (err.code === 'ENOENT') throw new Error('shellcheck is not installed: run "make test-deps" (as root; installs shellcheck), which "make test" does');
    throw new Error(`shellcheck:\n${err.stdout ?? ''}`);
  });
});

async function dispatch(nmResolvConf: string, nodeIp: string, action = 'up', opts: { resolvConfLinksToNm?: boolean } = {}): Promise<{ resolvConf: string | undefined; regularFile: boolean; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-dispatcher-'));
  try {
    await writeFile(join(dir, 'nm-resolv.conf'), nmResolvConf);
    await writeFile(join(dir, 'primary-ip'), `${nodeIp}\n`);
    if (opts.resolvConfLinksToNm) await symlink(join(dir, 'nm-resolv.conf'), join(dir, 'resolv.conf'));
    const env = { ...process.env, LBDNS_NM_RESOLV_CONF: join(dir, 'nm-resolv.conf'), LBDNS_RESOLV_CONF: join(dir, 'resolv.conf'), LBDNS_PRIMARY_IP_FILE: join(dir, 'primary-ip') };
    const { stderr } = await run('bash', [DISPATCHER, 'ens3', action], { env });
    const regularFile = await lstat(join(dir, 'resolv.conf')).then((st) => st.isFile(), () => false);
    return { resolvConf: await readFile(join(dir, 'resolv.conf'), 'utf8').catch(() => undefined), regularFile, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("the dispatcher script puts the node's own CoreDNS first, then at most two upstreams, keeping search and options", async () => {
  const { resolvConf } = await dispatch('search c1.example.com\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nnameserver 10.0.0.4\noptions ndots:2\n', '10.0.0.5');
  assert.ok(resolvConf !== undefined);
  assert.equal(resolvConf.split('\n').filter((l) => l !== '' && !l.startsWith('#')), ['search c1.example.com', 'options ndots:2', 'nameserver 10.0.0.5', 'nameserver 10.0.0.2', 'nameserver 10.0.0.3']);
});

test("removal: the script leaves /etc/resolv.conf a regular file, never a link, even where it was NetworkManager's link, so NetworkManager's default rc-manager (symlink) rewrites it once the MachineConfigs are gone", async () => {
  const nm = 'nameserver 10.0.0.2\n';
  const { resolvConf, regularFile } = await dispatch(nm, '10.0.0.5', 'up', { resolvConfLinksToNm: true });
  assert.ok(regularFile, 'a regular file: NetworkManager leaves alone only a link that is not its own');
  assert.match(resolvConf ?? '', /^nameserver 10\.0\.0\.5$/m);
});

test('the dispatcher script leaves resolv.conf alone without a usable node IP, and for events it does not handle', async () => {
  assert.is((await dispatch('nameserver 10.0.0.2\n', 'not-an-ip')).resolvConf, undefined);
  assert.is((await dispatch('nameserver 10.0.0.2\n', '10.0.0.5', 'hostname')).resolvConf, undefined);
});

test.run();
