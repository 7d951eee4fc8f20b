/**
 * Propagation on the real parts: the router Service's LB status patched on the real
 * kube-apiserver → the Corefile replaced on disk by the monitor (the bundle, in its own
 * process) → real CoreDNS, serving that file, answering the new address.
 */
import { performance } from 'node:perf_hooks';
import { DOMAIN, ROUTER, startCluster } from '../test/support/cluster-fixture.js';
import { startCoreDns, type CoreDns } from '../test/support/coredns.js';
import { freePort } from '../test/support/peers.js';
import { CorefileWatcher, figure, firstAnswer, median, ms, percentile, progress, spawnMonitor, type Bench, type BenchResult } from './support.js';

const CHANGES = Number(process.env.BENCH_PROPAGATION_CHANGES ?? 50);
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 200;
/** CoreDNS's reload plugin looks every 2 s ± 1 s (the Corefile's `reload 2s 1s`), then reloads. */
const TARGET_ANSWER_P99_MS = 3500;

/** A different ingress IP per change, so every change must reach the file. */
const ingressIp = (i: number): string => `10.0.${2 + Math.floor(i / 250)}.${(i % 250) + 1}`;


async function run(): Promise<BenchResult> {
  const cluster = await startCluster();
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  let dns: CoreDns | undefined;
  try {
    const [port, health, ready] = await Promise.all([freePort(), freePort(), freePort()]);
    watcher = await CorefileWatcher.open(cluster.out);
    const first = watcher.next(() => true, 30_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out, extra: ['--listen', `127.0.0.1:${port}`, '--health-port', String(health), '--ready-port', String(ready)] });
    await first;
    dns = await startCoreDns(cluster.out, { port });
    const name = `console.apps.${DOMAIN}`;
    const toFile: number[] = [];
    const toAnswer: number[] = [];
    progress(`propagation: ${CHANGES} Service status patches on the real kube-apiserver, each followed to real CoreDNS's answer`);
    for (let i = 0; i < CHANGES; i++) {
      const ip = ingressIp(i);
      const written = watcher.next((text) => text.includes(` IN A ${ip}"`), 10_000, `the Corefile to serve ${ip}`);
      const start = performance.now();
      await cluster.server.patchStatus(ROUTER, { loadBalancer: { ingress: [{ ip }] } });
      toFile.push((await written).at - start);
      toAnswer.push((await firstAnswer(dns, name, ip, 10_000)) - start);
    }
    const p50 = median(toFile);
    const p99 = percentile(toFile, 99);
    const answerP99 = percentile(toAnswer, 99);
    return {
      title: 'Propagation',
      method: `${CHANGES} changes in a row on the real kube-apiserver (make peers), each a merge patch of \`services/router-default/status\` with a new ingress IP; timed from just before the request to the inotify event of the rename that put a Corefile serving the new IP in place, and to the first answer with it from real CoreDNS serving that file (asked every 10 ms).`,
      figures: [
        figure('patch → Corefile, p50', ms(p50), { text: `≤ ${TARGET_P50_MS} ms`, met: p50 <= TARGET_P50_MS }),
        figure('patch → Corefile, p90', ms(percentile(toFile, 90))),
        figure('patch → Corefile, p99', ms(p99), { text: `≤ ${TARGET_P99_MS} ms`, met: p99 <= TARGET_P99_MS }),
        figure('patch → Corefile, min / max', `${ms(Math.min(...toFile))} / ${ms(Math.max(...toFile))}`),
        figure('patch → real CoreDNS answers, p50 / p99', `${ms(median(toAnswer))} / ${ms(answerP99)}`, { text: `p99 ≤ ${TARGET_ANSWER_P99_MS} ms`, met: answerP99 <= TARGET_ANSWER_P99_MS }),
      ],
    };
  } finally {
    await dns?.close();
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
  }
}

export const propagation: Bench = { name: 'propagation', run };
