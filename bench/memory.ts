/**
 * Memory: the monitor watching a large cluster (5,000 Nodes, 100 DNSRecords) on the real
 * kube-apiserver: RSS once it has settled, and how long it takes from its start to the first
 * Corefile on disk.
 */
import { DNSRECORD_NS, DOMAIN, dnsRecord, startCluster } from '../test/support/cluster-fixture.js';
import type { KubeObject } from '../test/support/kube-api-server.js';
import { IMAGES_PER_NODE, nodeIp, realisticNode } from './real-node.js';
import { CorefileWatcher, figure, mib, ms, progress, procStats, sleep, spawnMonitor, type Bench, type BenchResult } from './support.js';

const NODES = 5000;
const RECORDS = 100;
const SETTLE_SECONDS = 60;
const TARGET_MIB = 80;

async function run(): Promise<BenchResult> {
  const cluster = await startCluster({ nodes: {} });
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    const objects: KubeObject[] = [
      ...Array.from({ length: NODES }, (_, i) => realisticNode(`node-${String(i).padStart(4, '0')}`, nodeIp(i))),
      ...Array.from({ length: RECORDS }, (_, i) => dnsRecord(`record-${i}`, { dnsName: `svc-${i}.${DOMAIN}.`, targets: [`10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`] })),
    ];
    // 50 at a time: the real server takes each as a create and a status patch.
    for (let i = 0; i < objects.length; i += 50) await Promise.all(objects.slice(i, i + 50).map((o) => cluster.server.create(o)));
    progress(`memory: ${NODES} nodes and ${RECORDS} DNSRecords in ${DNSRECORD_NS} seeded`);
    watcher = await CorefileWatcher.open(cluster.out);
    const first = watcher.next((text) => text.includes(` node-${String(NODES - 1).padStart(4, '0')}`), 60_000, 'the first Corefile');
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out });
    const firstRender = (await first).at - monitor.spawnedAt;
    const samples: number[] = [];
    for (let s = 0; s < SETTLE_SECONDS; s++) {
      await sleep(1000);
      samples.push((await procStats(monitor.pid)).rssKiB);
    }
    const settled = samples.at(-1) ?? Number.NaN;
    const { hwmKiB } = await procStats(monitor.pid);
    return {
      title: 'Memory',
      method: `\`watch-lb-status\` (the bundle, in its own process) against the real kube-apiserver (make peers) holding ${NODES} Nodes (each about 11 kB of JSON like a real worker's: ${IMAGES_PER_NODE} images, conditions, labels; one InternalIP) and ${RECORDS} managed DNSRecords. RSS is VmRSS from /proc/PID/status, sampled each second for ${SETTLE_SECONDS} s after the first Corefile; time to the first render is from spawning the process to the rename that put the first Corefile in place.`,
      figures: [
        figure(`RSS after settling (${SETTLE_SECONDS} s)`, mib(settled), { text: `≤ ${TARGET_MIB} MiB`, met: settled / 1024 <= TARGET_MIB }),
        figure('RSS range while settling', `${mib(Math.min(...samples))} – ${mib(Math.max(...samples))}`),
        figure('peak RSS (VmHWM)', mib(hwmKiB)),
        figure('time to the first render', ms(firstRender)),
      ],
    };
  } finally {
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
  }
}

export const memory: Bench = { name: 'memory', run };
