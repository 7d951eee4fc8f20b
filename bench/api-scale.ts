/**
 * API scale: the monitor starting against a large cluster whose API server answers lists as
 * slowly as a real kube-apiserver does. For 1,000, 2,000 and 5,000 real-size Nodes: the time
 * from spawning the monitor to the first complete Corefile (how long a restarted monitor is
 * unready), its peak RSS (what a memory limit must allow) and its RSS 30 s after the start.
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { KubeApiServer, KubeObject, ListCost } from '../test/support/kube-api-server.js';
import { startFakeCluster, type FakeClusterFixture } from '../test/support/cluster-fixture.js';
import { nodeIp, realisticNode } from './real-node.js';
import { CorefileWatcher, figure, median, mib, ms, progress, procStats, sleep, spawnMonitor, type Bench, type BenchResult, type Figure } from './support.js';

/**
 * kube-apiserver 1.26 with etcd 3.4 on loopback answered a gzipped page of 500 Nodes (8.5 kB
 * of JSON each, 4.3 MB) in 0.24 s, and the monitor listing 100 Nodes a page took 2.25 s more
 * for 5,000 Nodes than for 2,000: 75 ms a page, of which the monitor's own decoding is about
 * 10. The two give 20 ms per request and 52 ms per MB (bench/RESULTS.md).
 */
const REAL_LIST_COST: ListCost = { perRequestMs: 20, perMegabyteMs: 52 };

const SIZES = [1000, 2000, 5000] as const;
/**
 * A kubelet rewrites its Node's status at least every nodeStatusReportFrequency (5 min), so a
 * cluster of N Nodes sends N/300 watch events a second, each a full Node: the monitor decodes
 * them all while it settles, and none may change the Corefile.
 */
const STATUS_REPORT_SECONDS = 300;
const SETTLE_SECONDS = 30;
const TARGETS = { firstRenderMs: 3000, peakMiB: 100, settledMiB: 64 } as const;

const nodeName = (i: number): string => `node-${String(i).padStart(4, '0')}`;

interface Run {
  readonly firstRenderMs: number;
  readonly peakKiB: number;
  readonly settledKiB: number;
  /** CPU time up to the first Corefile, and up to the settled sample. */
  readonly cpuFirst: number;
  readonly cpuSettled: number;
}

interface HeartbeatNode extends KubeObject {
  readonly status: { readonly conditions: readonly Record<string, unknown>[] };
}

/** Rewrites one Node's heartbeat at a time, round robin, at the rate N kubelets would. */
function heartbeats(server: KubeApiServer, nodes: number): () => void {
  let next = 0;
  let beats = 0;
  const timer = setInterval(() => {
    const name = nodeName(next);
    next = (next + 1) % nodes;
    const node = server.get<HeartbeatNode>({ resource: 'nodes', name });
    if (node === undefined) return;
    const at = new Date(Date.UTC(2026, 10, 20, 10, 0, ++beats % 60)).toISOString().replace('.000Z', 'Z');
    server.update({ ...node, status: { ...node.status, conditions: node.status.conditions.map((c) => ({ ...c, lastHeartbeatTime: at })) } });
  }, (STATUS_REPORT_SECONDS * 1000) / nodes);
  return () => clearInterval(timer);
}

async function once(cluster: FakeClusterFixture, nodes: number): Promise<Run> {
  const { kubeconfig, out } = cluster;
  await rm(out, { force: true });
  const watcher = await CorefileWatcher.open(out);
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    const first = watcher.next((text) => text.includes(` ${nodeName(nodes - 1)}`), 120_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig, out });
    const at = (await first).at;
    const atFirst = await procStats(monitor.pid);
    const stopBeats = heartbeats(cluster.server, nodes);
    await sleep(Math.max(0, monitor.spawnedAt + SETTLE_SECONDS * 1000 - performance.now())).finally(stopBeats);
    const settled = await procStats(monitor.pid);
    const rewrites = monitor.logs().filter((l) => l.msg === 'Corefile written').length;
    if (rewrites !== 1) throw new Error(`heartbeats alone rewrote the Corefile: ${rewrites} writes`);
    return { firstRenderMs: at - monitor.spawnedAt, peakKiB: settled.hwmKiB, settledKiB: settled.rssKiB, cpuFirst: atFirst.cpuSeconds, cpuSettled: settled.cpuSeconds };
  } finally {
    await monitor?.stop();
    watcher.close();
  }
}

async function run(): Promise<BenchResult> {
  const runs = Math.max(1, Math.round(Number(process.env.BENCH_API_RUNS ?? '3')) || 1);
  const figures: Figure[] = [];
  for (const nodes of SIZES) {
    const cluster = await startFakeCluster({ nodes: {}, server: { listCost: REAL_LIST_COST } });
    try {
      for (let i = 0; i < nodes; i++) cluster.server.create(realisticNode(nodeName(i), nodeIp(i)));
      const results: Run[] = [];
      for (let r = 0; r < runs; r++) {
        results.push(await once(cluster, nodes));
        const last = results.at(-1) as Run;
        progress(`api-scale: ${nodes} nodes, run ${r + 1}: first ${ms(last.firstRenderMs)}, peak ${mib(last.peakKiB)}, settled ${mib(last.settledKiB)}`);
      }
      const m = (pick: (r: Run) => number) => median(results.map(pick));
      const all = (pick: (r: Run) => number, show: (v: number) => string) => results.map((r) => show(pick(r))).join(', ');
      const at5000 = nodes === 5000;
      const target = (limit: number, value: number, unit: string) => (at5000 ? { text: `≤ ${limit} ${unit}`, met: value <= limit } : undefined);
      figures.push(
        figure(`${nodes} Nodes: first Corefile (runs: ${all((r) => r.firstRenderMs, (v) => (v / 1000).toFixed(2))} s)`, ms(m((r) => r.firstRenderMs)), target(TARGETS.firstRenderMs, m((r) => r.firstRenderMs), 'ms')),
        figure(`${nodes} Nodes: peak RSS, VmHWM (runs: ${all((r) => r.peakKiB, (v) => (v / 1024).toFixed(1))})`, mib(m((r) => r.peakKiB)), target(TARGETS.peakMiB, m((r) => r.peakKiB) / 1024, 'MiB')),
        figure(`${nodes} Nodes: RSS ${SETTLE_SECONDS} s after the start (runs: ${all((r) => r.settledKiB, (v) => (v / 1024).toFixed(1))})`, mib(m((r) => r.settledKiB)), target(TARGETS.settledMiB, m((r) => r.settledKiB) / 1024, 'MiB')),
        figure(`${nodes} Nodes: CPU time to the first Corefile / to ${SETTLE_SECONDS} s`, `${m((r) => r.cpuFirst).toFixed(2)} s / ${m((r) => r.cpuSettled).toFixed(2)} s`),
      );
    } finally {
      await cluster.close();
    }
  }
  return {
    title: 'API scale',
    method: `\`watch-lb-status\` (the bundle, in its own process) against the test API server holding N Nodes of 8.5 kB of JSON (40 images, one InternalIP), each list answer delayed to what kube-apiserver 1.26 takes (${REAL_LIST_COST.perRequestMs} ms + ${REAL_LIST_COST.perMegabyteMs} ms per MB of JSON), gzipped at level 1 as kube-apiserver does above 128 KiB. Medians of ${runs} runs; first Corefile from spawn to the rename that put it in place; RSS is VmRSS and the peak VmHWM from /proc/PID/status; CPU time is utime + stime.`,
    figures,
  };
}

export const apiScale: Bench = { name: 'api-scale', run };
