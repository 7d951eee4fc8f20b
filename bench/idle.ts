/**
 * Idle: the monitor left alone with nothing changing, neither in the API nor in DNS. The
 * ingress LB is a hostname (TTL 60 s) so the idle time includes its re-resolutions.
 */
import { startFakeCluster } from '../test/support/cluster-fixture.js';
import { startDnsServer } from '../test/support/dns-server.js';
import { CorefileWatcher, envSeconds, figure, mib, progress, procStats, sleep, spawnMonitor, type Bench, type BenchResult } from './support.js';

const HOST = 'router-0123.elb.us-east-1.example.net';
const TTL_SECONDS = 60;
const SETTLE_MS = 2000;

async function run(): Promise<BenchResult> {
  const seconds = envSeconds('BENCH_IDLE_SECONDS', 600);
  const dns = await startDnsServer();
  dns.set(HOST, { A: ['10.0.1.30', '10.0.1.31'], ttl: TTL_SECONDS });
  const cluster = await startFakeCluster({ ingress: [{ hostname: HOST }], nodes: { 'master-0': ['10.0.0.5'], 'master-1': ['10.0.0.6'], 'master-2': ['10.0.0.7'] } });
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    watcher = await CorefileWatcher.open(cluster.out);
    const first = watcher.next(() => true, 30_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out, dnsServer: dns.address });
    await first;
    await sleep(SETTLE_MS);

    const writesBefore = watcher.writes;
    const watchesOpen = cluster.server.watchCount;
    cluster.server.clearRequests();
    dns.resetCounts();
    const before = await procStats(monitor.pid);
    progress(`idle: ${seconds} s with nothing changing`);
    for (let left = seconds; left > 0; left -= 60) {
      await sleep(Math.min(left, 60) * 1000);
      if (left > 60) progress(`idle: ${seconds - left + 60} s of ${seconds} s`);
    }
    const after = await procStats(monitor.pid);

    const writes = watcher.writes - writesBefore;
    const requests = cluster.server.requests;
    const others = requests.filter((r) => !r.watch);
    const rewatches = requests.length - others.length;
    const cpu = after.cpuSeconds - before.cpuSeconds;
    const minutes = seconds / 60;
    return {
      title: 'Idle',
      method: `${seconds} s after the first Corefile (and ${SETTLE_MS / 1000} s to settle), nothing changing; the ingress LB is a hostname with TTL ${TTL_SECONDS} s on a test DNS server, so it is re-resolved throughout. Writes counted as replacements of the Corefile (inotify on its directory, and a poll); requests as recorded by the test API server; CPU as utime + stime from /proc/PID/stat. ${watchesOpen} watches were open.`,
      figures: [
        figure('Corefile writes', String(writes), { text: '0', met: writes === 0 }),
        figure('API requests other than the open watches', others.length === 0 ? '0' : `${others.length} (${[...new Set(others.map((r) => `${r.method} ${r.path}`))].join(', ')})`, { text: '0', met: others.length === 0 }),
        figure('watches re-opened', String(rewatches)),
        figure('CPU time used', `${cpu.toFixed(2)} s (${((cpu / seconds) * 100).toFixed(3)} % of one core)`),
        figure('DNS queries per minute for the LB hostname', (dns.queries(HOST) / minutes).toFixed(1)),
        figure('RSS at the end', mib(after.rssKiB)),
      ],
    };
  } finally {
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
    await dns.close();
  }
}

export const idle: Bench = { name: 'idle', run };
