/**
 * The node dnsmasq's drop-in, run by Debian's real dnsmasq on loopback: api-int answered by
 * dnsmasq itself while CoreDNS is down, the cluster's other names sent to CoreDNS.
 */
import { test } from 'uvu';
import { freePort } from './support/peers.js';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDnsServer } from './support/dns-server.js';
import { startDnsmasq, type Dnsmasq } from './support/dnsmasq.js';
import { API_INT_IP, DOMAIN, LB_CONFIG, startCluster, startFakeCluster, startMonitor, until } from './support/cluster-fixture.js';
import { runLbdns } from './support/run-cli.js';
import { dnsmasqServedFor } from '../lib/sinks/dnsmasq-output.js';
import { API_VIP, DOMAIN as ON_PREM_DOMAIN, INGRESS_VIP, withOnPrem } from './support/on-prem-fixture.js';

const CLUSTER = ['--domain', 'c1.example.com', '--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--api-int-lb', 'fd00::20', '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2'];

/** dnsmasq answering on 127.0.0.1 with only the drop-in: no resolv.conf, no /etc/hosts, no cache (as the on-prem layout runs it). */
async function startDropInDnsmasq(dropIn: string, probe = 'api-int.c1.example.com', extra: readonly string[] = []): Promise<Dnsmasq> {
  const port = await freePort();
  return startDnsmasq([`--conf-file=${dropIn}`, '--no-resolv', '--no-hosts', '--cache-size=0', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--pid-file=', ...extra], port, probe);
}

async function withDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-dnsmasq-'));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('with CoreDNS down, dnsmasq answers api-int from the drop-in, both families', async () => {
  await withDir(async (dir) => {
    const corednsPort = await freePort(); // nothing listens there: CoreDNS is not running
    const dropIn = join(dir, 'lbdns.conf');
    const r = await runLbdns(['render-dnsmasq', ...CLUSTER, '--listen', `127.0.0.1:${corednsPort}`, '--out', dropIn]);
    assert.is(r.code, 0, r.stderr);
    const dnsmasq = await startDropInDnsmasq(dropIn);
    try {
      assert.equal(await dnsmasq.resolver.resolve4('api-int.c1.example.com'), ['10.0.0.20']);
      assert.equal(await dnsmasq.resolver.resolve6('api-int.c1.example.com'), ['fd00::20']);
      const other = await dnsmasq.resolver.resolve4('x.apps.c1.example.com').then(() => 'answered', (e: NodeJS.ErrnoException) => e.code);
      assert.is.not(other, 'answered', 'nothing answers the cluster names while CoreDNS is down');
    } finally {
      await dnsmasq.stop();
    }
  });
});

test('with CoreDNS down, dnsmasq answers every other type of api-int at once with an empty answer, AAAA of an IPv4-only api-int included', async () => {
  await withDir(async (dir) => {
    const corednsPort = await freePort();
    const dropIn = join(dir, 'lbdns.conf');
    const v4only = CLUSTER.filter((a, i) => a !== 'fd00::20' && CLUSTER[i + 1] !== 'fd00::20');
    const r = await runLbdns(['render-dnsmasq', ...v4only, '--listen', `127.0.0.1:${corednsPort}`, '--out', dropIn]);
    assert.is(r.code, 0, r.stderr);
    const dnsmasq = await startDropInDnsmasq(dropIn);
    try {
      for (const ask of [() => dnsmasq.resolver.resolve6('api-int.c1.example.com'), () => dnsmasq.resolver.resolveTxt('api-int.c1.example.com'), () => dnsmasq.resolver.resolveMx('api-int.c1.example.com')]) {
        const started = Date.now();
        const code = await ask().then(() => 'answered', (e: NodeJS.ErrnoException) => e.code);
        assert.is(code, 'ENODATA', 'an empty NOERROR answer, not a timeout');
        // Well under the resolver's 1 s timeout: a loaded machine may take a few hundred ms.
        assert.ok(Date.now() - started < 900, `answered at once (${Date.now() - started} ms)`);
      }
    } finally {
      await dnsmasq.stop();
    }
  });
});

test("with CoreDNS up, dnsmasq sends the cluster's other names to it, and a short node name", async () => {
  await withDir(async (dir) => {
    const coredns = await startDnsServer();
    const dnsmasqConf = join(dir, 'lbdns.conf');
    try {
      coredns.set('x.apps.c1.example.com', { A: ['10.0.1.30'] });
      coredns.set('master-0', { A: ['10.0.0.5'] });
      const r = await runLbdns(['render-dnsmasq', ...CLUSTER, '--listen', coredns.address, '--out', dnsmasqConf]);
      assert.is(r.code, 0, r.stderr);
      // A default server, as NetworkManager's upstreams are on a node: dnsmasq 2.90 refuses a bare name, server=// or not, without one. Nothing listens there.
      const dnsmasq = await startDropInDnsmasq(dnsmasqConf, undefined, ['--server=127.0.0.2#9']);
      try {
        assert.equal(await dnsmasq.resolver.resolve4('x.apps.c1.example.com'), ['10.0.1.30']);
        assert.ok(coredns.queries('x.apps.c1.example.com', 'A') >= 1);
        assert.is(coredns.queries('api-int.c1.example.com'), 0, 'api-int stays with dnsmasq');
        assert.equal(await dnsmasq.resolver.resolve4('master-0'), ['10.0.0.5']);
      } finally {
        await dnsmasq.stop();
      }
    } finally {
      await coredns.close();
    }
  });
});

test("dnsRecordsType External: dnsmasq leaves api-int to CoreDNS, which forwards it to the external DNS, rather than answering it NXDOMAIN itself", async () => {
  await withOnPrem({ status: { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP], loadBalancer: { type: 'UserManaged' }, dnsRecordsType: 'External' } }, async (c) => {
    const coredns = await startDnsServer();
    try {
      coredns.set(`api-int.${ON_PREM_DOMAIN}`, { A: ['192.0.2.77'] });
      const dropIn = join(dirname(c.out), 'lbdns.conf');
      const r = await runLbdns(['render-dnsmasq', c.kubeconfig, '--listen', coredns.address, '--out', dropIn, '--upstream', '10.0.0.2', '--wait-timeout', '5s']);
      assert.is(r.code, 0, r.stderr);
      const dnsmasq = await startDropInDnsmasq(dropIn, `api-int.${ON_PREM_DOMAIN}`);
      try {
        assert.equal(await dnsmasq.resolver.resolve4(`api-int.${ON_PREM_DOMAIN}`), ['192.0.2.77']);
        assert.ok(coredns.queries(`api-int.${ON_PREM_DOMAIN}`, 'A') >= 1);
      } finally {
        await dnsmasq.stop();
      }
    } finally {
      await coredns.close();
    }
  });
});

test('a switch to dnsRecordsType External leaves the running dnsmasq answering api-int until it restarts on the new drop-in, which sends api-int to CoreDNS', async () => {
  const internal = { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP], loadBalancer: { type: 'UserManaged' } };
  await withOnPrem({ status: internal }, async (c) => {
    const coredns = await startDnsServer();
    const dnsmasqs: Dnsmasq[] = [];
    try {
      coredns.set(`api-int.${ON_PREM_DOMAIN}`, { A: ['192.0.2.77'] });
      const dropIn = join(dirname(c.out), 'lbdns.conf');
      const render = () => runLbdns(['render-dnsmasq', c.kubeconfig, '--listen', coredns.address, '--out', dropIn, '--upstream', '10.0.0.2', '--wait-timeout', '5s']);
      assert.is((await render()).code, 0);
      const running = await startDropInDnsmasq(dropIn, `api-int.${ON_PREM_DOMAIN}`);
      dnsmasqs.push(running);
      await c.server.patchStatus({ resource: 'infrastructures', name: 'cluster' }, { platformStatus: { baremetal: { ...internal, dnsRecordsType: 'External' } } });
      const switched = await render();
      assert.is(switched.code, 0, switched.stderr);
      assert.not.match(await readFile(dropIn, 'utf8'), /^(local|hostsdir)=/m);
      await new Promise((r) => setTimeout(r, 500)); // dnsmasq reads a changed hosts file within a few ms (inotify)
      assert.equal(await running.resolver.resolve4(`api-int.${ON_PREM_DOMAIN}`), [API_VIP], 'the running dnsmasq still answers api-int');
      const restarted = await startDropInDnsmasq(dropIn, `api-int.${ON_PREM_DOMAIN}`);
      dnsmasqs.push(restarted);
      assert.equal(await restarted.resolver.resolve4(`api-int.${ON_PREM_DOMAIN}`), ['192.0.2.77'], 'restarted, it asks CoreDNS');
    } finally {
      for (const d of dnsmasqs) await d.stop();
      await coredns.close();
    }
  });
});

test('a hosts file the drop-in does not name (api-int withheld) is not read back as what dnsmasq served', async () => {
  await withDir(async (dir) => {
    const dropIn = join(dir, 'lbdns.conf');
    await mkdir(join(dir, 'lbdns.hosts'));
    await writeFile(join(dir, 'lbdns.hosts', 'api-int'), '10.0.0.20 api-int.c1.example.com\n');
    await writeFile(dropIn, `hostsdir=${join(dir, 'lbdns.hosts')}\n`);
    assert.equal(await dnsmasqServedFor(dropIn, '--out', 'api-int.c1.example.com'), ['10.0.0.20']);
    await writeFile(dropIn, 'server=/c1.example.com/127.0.0.1#5353\n');
    assert.equal(await dnsmasqServedFor(dropIn, '--out', 'api-int.c1.example.com'), []);
  });
});

test("a custom template that changes the data it is given (splice) changes nothing in the drop-in's hosts file made from the same record set", async () => {
  await withDir(async (dir) => {
    const template = join(dir, 'splice.eta');
    await writeFile(template, `<% for (const n of it.names) n.v4.splice(0) -%>\n${await readFile(join(dirname(fileURLToPath(import.meta.url)), '..', 'templates', 'corefile.eta'), 'utf8')}`);
    const r = await runLbdns(['render-corefile', ...CLUSTER, '--api-int-lb', '10.0.0.21', '--listen', '127.0.0.1:5353', '--template', template, '--out', join(dir, 'Corefile'), '--dnsmasq-out', join(dir, 'lbdns.conf')]);
    assert.is(r.code, 0, r.stderr);
    assert.match(await readFile(join(dir, 'lbdns.hosts', 'api-int'), 'utf8'), /^10\.0\.0\.20 api-int\.c1\.example\.com\n10\.0\.0\.21 api-int\.c1\.example\.com\n/m);
  });
});

test('render-dnsmasq refuses a relative --out at once, since the drop-in names the hosts directory beside it by its absolute path', async () => {
  const r = await runLbdns(['render-dnsmasq', ...CLUSTER, '--listen', '127.0.0.1:5353', '--out', 'lbdns.conf']);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--out "lbdns\.conf": the drop-in names the directory beside it that holds api-int's hosts file by its absolute path/);
});

test('render-dnsmasq refuses a CoreDNS left on :53, where dnsmasq would forward to itself', async () => {
  await withDir(async (dir) => {
    const r = await runLbdns(['render-dnsmasq', ...CLUSTER, '--out', join(dir, 'lbdns.conf')]);
    assert.is(r.code, 2);
    assert.match(r.stderr, /pass --listen with another port \(e\.g\. 127\.0\.0\.1:5353\); dnsmasq listens on port 53 of every address and would send them to itself/);
  });
});

test('render-dnsmasq refuses a CoreDNS on port 53 of one address, which the node dnsmasq listens on too', async () => {
  await withDir(async (dir) => {
    const r = await runLbdns(['render-dnsmasq', ...CLUSTER, '--listen', '127.0.0.1:53', '--out', join(dir, 'lbdns.conf')]);
    assert.is(r.code, 2);
    assert.match(r.stderr, /pass --listen with another port/);
    assert.equal(await readdir(dir), []);
  });
});

test('render-corefile --dnsmasq-out writes the Corefile and, from the same data, the drop-in and api-int hosts file dnsmasq answers from', async () => {
  await withDir(async (dir) => {
    const dropIn = join(dir, 'dnsmasq', 'lbdns.conf');
    await mkdir(dirname(dropIn));
    const r = await runLbdns(['render-corefile', ...CLUSTER, '--listen', '127.0.0.1:5353', '--out', join(dir, 'Corefile'), '--dnsmasq-out', dropIn]);
    assert.is(r.code, 0, r.stderr);
    assert.match(await readFile(join(dir, 'Corefile'), 'utf8'), /^\.:5353 \{$/m);
    assert.match(await readFile(dropIn, 'utf8'), /^server=\/c1\.example\.com\/127\.0\.0\.1#5353$/m);
    assert.equal((await readFile(join(dir, 'dnsmasq', 'lbdns.hosts', 'api-int'), 'utf8')).split('\n').filter((l) => l !== '' && !l.startsWith('#')), ['10.0.0.20 api-int.c1.example.com', 'fd00::20 api-int.c1.example.com']);
  });
});

test('render-corefile --dnsmasq-out with --diff or --out - is refused at once, and nothing is written', async () => {
  await withDir(async (dir) => {
    for (const extra of [['--out', join(dir, 'Corefile'), '--diff'], ['--out', '-']]) {
      const r = await runLbdns(['render-corefile', ...CLUSTER, '--listen', '127.0.0.1:5353', ...extra, '--dnsmasq-out', join(dir, 'lbdns.conf')]);
      assert.is(r.code, 2, r.stderr);
      assert.match(r.stderr, /--dnsmasq-out writes the drop-in beside a Corefile written to a file/);
    }
    assert.equal(await readdir(dir), []);
  });
});

test('a drop-in that cannot be written does not hold the monitor back: the Corefile on disk makes it ready, lbdns_dnsmasq_out_of_date is 1, and the drop-in is retried until it can be', async () => {
  await withDir(async (dir) => {
    const cluster = await startFakeCluster();
    const dropIn = join(dir, 'lbdns.conf');
    // A directory where the hosts file is made: every write of the drop-in's files fails, past the checks at start.
    await mkdir(join(dir, 'lbdns.hosts.staging', 'api-int'), { recursive: true });
    const monitor = await startMonitor(cluster, { flags: { listen: '127.0.0.1:5353' }, dnsmasqOut: dropIn });
    try {
      await until('the Corefile', async () => (await readFile(cluster.out, 'utf8').catch(() => '')).includes('template'));
      await until('ready', async () => (await fetch(`http://${monitor.health}/readyz`)).status === 200);
      const metrics = await (await fetch(`http://${monitor.health}/metrics`)).text();
      assert.match(metrics, /^lbdns_renders_total\{result="written"\} 1$/m);
      assert.ok(monitor.logs().some((l) => l.msg === 'Corefile written'));
      // The monitor is ready once the Corefile is on disk, before it tries the drop-in.
      await until('the failed drop-in logged', async () => monitor.logs().some((l) => String(l.msg).startsWith('writing the dnsmasq drop-in failed')));
      const outOfDate = async () => /^lbdns_dnsmasq_out_of_date (\d)$/m.exec(await (await fetch(`http://${monitor.health}/metrics`)).text())?.[1];
      assert.is(await outOfDate(), '1');
      await rm(join(dir, 'lbdns.hosts.staging', 'api-int'), { recursive: true });
      await until('the drop-in, at a retry', async () => (await readFile(dropIn, 'utf8').catch(() => '')).includes('hostsdir='), 10_000);
      await until('lbdns_dnsmasq_out_of_date back to 0', async () => (await outOfDate()) === '0');
    } finally {
      await monitor.stop();
      await cluster.close();
    }
  });
});

test('an api-int move in the cluster reaches the running dnsmasq within seconds, with no signal, and a move back too', async () => {
  await withDir(async (dir) => {
    const cluster = await startCluster();
    const dropIn = join(dir, 'lbdns.conf');
    const corednsPort = await freePort(); // CoreDNS is down: api-int must come from dnsmasq alone
    const monitor = await startMonitor(cluster, { flags: { listen: `127.0.0.1:${corednsPort}` }, dnsmasqOut: dropIn });
    let dnsmasq: Dnsmasq | undefined;
    try {
      await until('the drop-in', async () => (await readFile(dropIn, 'utf8').catch(() => '')).includes('hostsdir='));
      dnsmasq = await startDropInDnsmasq(dropIn, `api-int.${DOMAIN}`);
      const served = dnsmasq;
      const answer = async () => (await served.resolver.resolve4(`api-int.${DOMAIN}`).catch(() => [])).join();
      await until('the running dnsmasq answers the LB', async () => (await answer()) === API_INT_IP);
      const before = await readFile(dropIn, 'utf8');
      await cluster.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': '10.0.0.99' } });
      await until('the running dnsmasq answers the new address', async () => (await answer()) === '10.0.0.99', 5000);
      await cluster.server.mergePatch(LB_CONFIG, { data: { 'internal-api-lb-ips': API_INT_IP } });
      await until('and the old one again', async () => (await answer()) === API_INT_IP, 5000);
      assert.is(await readFile(dropIn, 'utf8'), before, 'the drop-in itself, which dnsmasq reads only at start, never changed');
      assert.equal(await readdir(join(dir, 'lbdns.hosts')), ['api-int'], 'only the whole hosts file is ever in the watched directory');
    } finally {
      await dnsmasq?.stop();
      await monitor.stop();
      await cluster.close();
    }
  });
});

test('after an api-int move, a reload (SIGHUP, as lbdns-dnsmasq-hosts.path asks systemd for) leaves dnsmasq answering the new address alone', async () => {
  await withDir(async (dir) => {
    const dropIn = join(dir, 'lbdns.conf');
    const corednsPortUnused = await freePort();
    const render = (apiInt: string) => runLbdns(['render-dnsmasq', '--domain', 'c1.example.com', '--api-lb', '10.0.0.10', '--api-int-lb', apiInt, '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2', '--listen', `127.0.0.1:${corednsPortUnused}`, '--out', dropIn]);
    assert.is((await render('10.0.0.20')).code, 0);
    const dnsmasq = await startDropInDnsmasq(dropIn);
    try {
      assert.is((await render('10.0.0.21')).code, 0);
      dnsmasq.reload();
      await until('the new address alone', async () => (await dnsmasq.resolver.resolve4('api-int.c1.example.com').catch(() => [])).join() === '10.0.0.21', 5000);
    } finally {
      await dnsmasq.stop();
    }
  });
});

test("a drop-in whose hosts directory is a symlink to a directory is written through it", async () => {
  await withDir(async (dir) => {
    await mkdir(join(dir, 'real.hosts'));
    await symlink(join(dir, 'real.hosts'), join(dir, 'lbdns.hosts'));
    const r = await runLbdns(['render-dnsmasq', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'lbdns.conf')]);
    assert.is(r.code, 0, r.stderr);
    assert.equal(await readdir(join(dir, 'real.hosts')), ['api-int']);
  });
});

test("a symlink left in the drop-in's staging directory is replaced, never written through: the file it points at stays where it is, as it was", async () => {
  await withDir(async (dir) => {
    const elsewhere = join(dir, 'elsewhere');
    await writeFile(elsewhere, 'kept\n');
    await mkdir(join(dir, 'lbdns.hosts.staging'));
    await symlink(elsewhere, join(dir, 'lbdns.hosts.staging', 'api-int'));
    const r = await runLbdns(['render-dnsmasq', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'lbdns.conf')]);
    assert.is(r.code, 0, r.stderr);
    assert.is(await readFile(elsewhere, 'utf8'), 'kept\n');
    assert.match(await readFile(join(dir, 'lbdns.hosts', 'api-int'), 'utf8'), /api-int\./);
  });
});

test.run();
