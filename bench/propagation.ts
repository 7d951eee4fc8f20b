/**
 * Propagation: the router Service's LB status patched over HTTP on the test API server →
 * the Corefile replaced on disk by the monitor (the bundle, in its own process).
 */
import { performance } from 'node:perf_hooks';
import { ROUTER, startFakeCluster } from '../test/support/cluster-fixture.js';
import { CorefileWatcher, figure, median, mergePatch, ms, percentile, progress, spawnMonitor, type Bench, type BenchResult } from './support.js';

const CHANGES = 200;
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 200;

/** A different ingress IP per change, so every change must reach the file. */
const ingressIp = (i: number): string => `10.0.${2 + Math.floor(i / 250)}.${(i % 250) + 1}`;

async function run(): Promise<BenchResult> {
  const cluster = await startFakeCluster();
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    watcher = await CorefileWatcher.open(cluster.out);
    const first = watcher.next(() => true, 30_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out });
    await first;
    const statusPath = `/api/v1/namespaces/${ROUTER.namespace}/services/${ROUTER.name}/status`;
    const latencies: number[] = [];
    progress(`propagation: ${CHANGES} Service status patches`);
    for (let i = 0; i < CHANGES; i++) {
      const ip = ingressIp(i);
      const written = watcher.next((text) => text.includes(` IN A ${ip}"`), 10_000, `the Corefile to serve ${ip}`);
      const start = performance.now();
      await mergePatch(cluster.server.url, statusPath, { status: { loadBalancer: { ingress: [{ ip }] } } });
      latencies.push((await written).at - start);
    }
    const p50 = median(latencies);
    const p99 = percentile(latencies, 99);
    return {
      title: 'Propagation',
      method: `${CHANGES} changes in a row, each a merge patch of \`services/router-default/status\` with a new ingress IP sent over HTTP; timed from just before the request to the inotify event of the rename that put a Corefile serving the new IP in place.`,
      figures: [
        figure('p50', ms(p50), { text: `≤ ${TARGET_P50_MS} ms`, met: p50 <= TARGET_P50_MS }),
        figure('p90', ms(percentile(latencies, 90))),
        figure('p99', ms(p99), { text: `≤ ${TARGET_P99_MS} ms`, met: p99 <= TARGET_P99_MS }),
        figure('max', ms(Math.max(...latencies))),
        figure('min', ms(Math.min(...latencies))),
      ],
    };
  } finally {
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
  }
}

export const propagation: Bench = { name: 'propagation', run };
