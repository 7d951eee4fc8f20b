/**
 * Drift: the ingress LB is a hostname (as on AWS) whose DNS answer changes under a 5 s TTL;
 * the monitor must follow it within TTL + 1 s without any change in the API.
 */
import { performance } from 'node:perf_hooks';
import { startFakeCluster } from '../test/support/cluster-fixture.js';
import { startDnsServer } from '../test/support/dns-server.js';
import { CorefileWatcher, envSeconds, figure, median, ms, progress, sleep, spawnMonitor, type Bench, type BenchResult } from './support.js';

const HOST = 'router-0123.elb.us-east-1.example.net';
const TTL_SECONDS = 5;
const TARGET_MS = (TTL_SECONDS + 1) * 1000;

const answer = (i: number): string => `10.0.5.${(i % 250) + 1}`;

async function run(): Promise<BenchResult> {
  const duration = envSeconds('BENCH_DRIFT_SECONDS', 60) * 1000;
  const dns = await startDnsServer();
  dns.set(HOST, { A: [answer(0)], ttl: TTL_SECONDS });
  const cluster = await startFakeCluster({ ingress: [{ hostname: HOST }] });
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    watcher = await CorefileWatcher.open(cluster.out);
    const first = watcher.next((text) => text.includes(` IN A ${answer(0)}"`), 30_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out, dnsServer: dns.address });
    await first;
    dns.resetCounts();
    const started = performance.now();
    const latencies: number[] = [];
    progress(`drift: changing the answer of ${HOST} for ${duration / 1000} s`);
    for (let i = 1; performance.now() - started < duration; i++) {
      // A random point in the refresh cycle, so the figures cover the whole range.
      await sleep(Math.random() * TTL_SECONDS * 1000);
      const ip = answer(i);
      const written = watcher.next((text) => text.includes(` IN A ${ip}"`), TARGET_MS * 3, `the Corefile to serve ${ip}`);
      const changed = performance.now();
      dns.set(HOST, { A: [ip], ttl: TTL_SECONDS });
      latencies.push((await written).at - changed);
    }
    const minutes = (performance.now() - started) / 60_000;
    const worst = Math.max(...latencies);
    const perMinute = (type?: 'A' | 'AAAA') => (dns.queries(HOST, type) / minutes).toFixed(1);
    return {
      title: 'Drift',
      method: `${latencies.length} changes of the A record of the ingress LB hostname (TTL ${TTL_SECONDS} s) on a test DNS server, each at a random point in the monitor's refresh cycle, over ${(minutes * 60).toFixed(0)} s; timed from the change to the rename that put a Corefile serving the new address in place. Queries counted by the DNS server over the same time; one A and one AAAA query per refresh, every TTL to TTL + 10 % (jitter), is ${((2 * 60) / (TTL_SECONDS * 1.05)).toFixed(1)} a minute.`,
      figures: [
        figure('change → Corefile replaced, max', ms(worst), { text: `≤ TTL + 1 s = ${TARGET_MS} ms`, met: worst <= TARGET_MS }),
        figure('change → Corefile replaced, median', ms(median(latencies))),
        figure('DNS queries per name per minute (A + AAAA)', perMinute()),
        figure('… of which A', perMinute('A')),
        figure('… of which AAAA', perMinute('AAAA')),
      ],
    };
  } finally {
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
    await dns.close();
  }
}

export const drift: Bench = { name: 'drift', run };
