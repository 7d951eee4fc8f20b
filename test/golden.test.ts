/**
 * The rendered Corefile, byte for byte, for representative clusters. The goldens in
 * test/golden/ were reviewed line by line against the CoreDNS semantics in shared/NOTES.md.
 * `LBDNS_UPDATE_GOLDEN=1` rewrites them from the current output: review the diff before
 * accepting it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logLines, runLbdns } from './support/run-cli.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));
const UPDATE = process.env.LBDNS_UPDATE_GOLDEN === '1';

const CONTROL_PLANE_CLUSTER = [
  '--domain', 'c1.example.com',
  '--api-lb', '10.0.0.11', '--api-lb', '10.0.0.10',
  '--api-int-lb', '10.0.0.20',
  '--ingress-lb', '10.0.1.31', '--ingress-lb', '10.0.1.30',
  '--node', 'master-0=10.0.0.5', '--node', 'master-1=10.0.0.6', '--node', 'master-2.c1.example.com=10.0.0.7',
];
const CONTROL_PLANE_UPSTREAMS = ['--upstream', '10.0.0.2', '--upstream', '10.0.0.3'];

const seq = (n: number, f: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => f(i + 1));
const repeatFlag = (flag: string, values: readonly string[]): string[] => values.flatMap((v) => [flag, v]);

const CASES: Record<string, readonly string[]> = {
  'control-plane.Corefile': [...CONTROL_PLANE_CLUSTER, ...CONTROL_PLANE_UPSTREAMS],
  'bootstrap.Corefile': [
    '--role', 'bootstrap',
    '--domain', 'c1.example.com',
    '--api-int-lb', '10.0.0.21', '--api-int-lb', '10.0.0.20',
    '--ingress-lb', '10.0.1.30',
    '--upstream', '10.0.0.2',
  ],
  'apps-only.Corefile': ['--role', 'apps-only', '--domain', 'c1.example.com', '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2'],
  'private.Corefile': ['--domain', 'c1.example.com', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2'],
  'dual-stack.Corefile': [
    '--domain', 'ds.example.com',
    '--api-lb', '2001:db8::10', '--api-lb', '192.0.2.10',
    '--api-int-lb', '192.0.2.20', '--api-int-lb', '2001:DB8:0:0::20',
    '--ingress-lb', '192.0.2.30', '--ingress-lb', '2001:db8::30', '--ingress-lb', '2001:db8::31',
    '--node', 'cp-0=192.0.2.5', '--node', 'cp-0=2001:db8::5', '--node', 'cp-1=2001:db8::6',
    '--upstream', '2001:db8::53', '--upstream', '192.0.2.53',
    '--ttl', '30', '--reload-interval', '10s', '--reload-jitter', '5s',
  ],
  'sixteen-ips.Corefile': [
    '--domain', 'big.example.com',
    ...repeatFlag('--api-lb', seq(16, (i) => `10.1.0.${i}`).reverse()),
    ...repeatFlag('--api-int-lb', [...seq(8, (i) => `10.2.0.${i}`), ...seq(8, (i) => `fd00:2::${i.toString(16)}`)]),
    ...repeatFlag('--ingress-lb', seq(16, (i) => `fd00:3::${i.toString(16)}`)),
    ...repeatFlag('--upstream', seq(15, (i) => `10.9.0.${i}`)),
  ],
  'listen-5353.Corefile': [...CONTROL_PLANE_CLUSTER, ...CONTROL_PLANE_UPSTREAMS, '--listen', '127.0.0.1:5353'],
  'listen-ipv6.Corefile': [...CONTROL_PLANE_CLUSTER, ...CONTROL_PLANE_UPSTREAMS, '--listen', '[::1]:5353'],
  'custom-template.Corefile': [...CONTROL_PLANE_CLUSTER, ...CONTROL_PLANE_UPSTREAMS, '--template', join(GOLDEN_DIR, 'custom.eta')],
};

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lbdns-golden-'));
  // A clone made under umask 002 leaves the template group-writable, which lbdns refuses.
  await chmod(join(GOLDEN_DIR, 'custom.eta'), 0o644);
});

test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function golden(name: string, actual: string): Promise<string> {
  const path = join(GOLDEN_DIR, name);
  if (UPDATE) await writeFile(path, actual);
  return readFile(path, 'utf8');
}

async function renderToFile(name: string, args: readonly string[]): Promise<string> {
  const out = join(dir, name);
  const r = await runLbdns(['render-corefile', ...args, '--out', out]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, '', 'a run that writes --out prints nothing on stdout');
  return readFile(out, 'utf8');
}

for (const [name, args] of Object.entries(CASES)) {
  test(`${name}: --out writes exactly the golden file`, async () => {
    const written = await renderToFile(name, args);
    assert.fixture(written, await golden(name, written));
  });

  test(`${name}: stdout carries exactly the golden file`, async () => {
    const r = await runLbdns(['render-corefile', ...args]);
    assert.is(r.code, 0, r.stderr);
    assert.fixture(r.stdout, await readFile(join(GOLDEN_DIR, name), 'utf8'));
  });
}

test('--out - prints to stdout, as no --out does', async () => {
  const r = await runLbdns(['render-corefile', ...CASES['control-plane.Corefile']!, '--out', '-']);
  assert.is(r.code, 0, r.stderr);
  assert.fixture(r.stdout, await readFile(join(GOLDEN_DIR, 'control-plane.Corefile'), 'utf8'));
});

test('upstreams from resolv.conf skip loopback and link-local resolvers and keep the rest in order', async () => {
  const resolvConf = join(dir, 'resolv.conf');
  await writeFile(
    resolvConf,
    ['# written by a test', 'search c1.example.com', 'nameserver 127.0.0.53', 'nameserver fe80::1%eth0', 'nameserver 169.254.169.254', 'nameserver 10.0.0.2', 'nameserver 10.0.0.3', 'options edns0', ''].join('\n'),
  );
  const r = await runLbdns(['render-corefile', ...CONTROL_PLANE_CLUSTER, '--resolv-conf', resolvConf]);
  assert.is(r.code, 0, r.stderr);
  assert.fixture(r.stdout, await readFile(join(GOLDEN_DIR, 'control-plane.Corefile'), 'utf8'));
  const dropped = logLines(r.stderr)
    .filter((l) => l.msg === 'upstream resolver dropped')
    .map((l) => l.address);
  assert.equal(dropped, ['127.0.0.53', 'fe80::1%eth0', '169.254.169.254']);
});

test.run();
