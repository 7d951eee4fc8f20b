/**
 * Memory: the monitor watching a large cluster (5,000 Nodes, 100 DNSRecords): RSS once it
 * has settled, and how long it takes from its start to the first Corefile on disk.
 */
import type { KubeObject } from '../test/support/kube-api-server.js';
import { DNSRECORD_NS, DOMAIN, dnsRecord, startCluster } from '../test/support/cluster-fixture.js';
import { CorefileWatcher, figure, mib, ms, progress, procStats, sleep, spawnMonitor, type Bench, type BenchResult } from './support.js';

const NODES = 5000;
const RECORDS = 100;
const SETTLE_SECONDS = 60;
const TARGET_MIB = 80;

const nodeIp = (i: number): string => `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
const IMAGES_PER_NODE = 40;

/**
 * A Node the size of a real OpenShift worker's (about 11 kB of JSON, most of it the image
 * list the kubelet reports): the monitor only reads names and InternalIPs, but the API sends
 * whole objects, and what it keeps of them is what this benchmark is about.
 */
function realisticNode(name: string, ip: string): KubeObject {
  const image = (i: number) => ({
    names: [`quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:${(i * 7919).toString(16).padStart(64, '0')}`, `quay.io/openshift-release-dev/ocp-v4.0-art-dev:component-${i}`],
    sizeBytes: 400_000_000 + i * 1000,
  });
  const condition = (type: string) => ({ type, status: type === 'Ready' ? 'True' : 'False', lastHeartbeatTime: '2026-11-20T10:00:00Z', lastTransitionTime: '2026-11-01T10:00:00Z', reason: `Kubelet${type}`, message: `kubelet reports ${type}` });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/worker': '', 'node.kubernetes.io/instance-type': 'm6i.xlarge', 'topology.kubernetes.io/region': 'us-east-1', 'topology.kubernetes.io/zone': 'us-east-1a' },
      annotations: { 'machine.openshift.io/machine': `openshift-machine-api/${name}`, 'machineconfiguration.openshift.io/currentConfig': 'rendered-worker-0123456789abcdef', 'machineconfiguration.openshift.io/desiredConfig': 'rendered-worker-0123456789abcdef', 'machineconfiguration.openshift.io/state': 'Done' },
    },
    spec: { providerID: `aws:///us-east-1a/i-${name}` },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }, { type: 'Hostname', address: `${name}.ec2.internal` }, { type: 'InternalDNS', address: `${name}.ec2.internal` }],
      allocatable: { cpu: '3500m', 'ephemeral-storage': '114396791822', memory: '15225892Ki', pods: '250' },
      capacity: { cpu: '4', 'ephemeral-storage': '125238252Ki', memory: '16374868Ki', pods: '250' },
      conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map(condition),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      images: Array.from({ length: IMAGES_PER_NODE }, (_, i) => image(i)),
      nodeInfo: { architecture: 'amd64', bootID: '01234567-89ab-cdef-0123-456789abcdef', containerRuntimeVersion: 'cri-o://1.31.0', kernelVersion: '5.14.0-427.el9.x86_64', kubeProxyVersion: 'v1.32.0', kubeletVersion: 'v1.32.0', machineID: 'ec2123456789abcdef0123456789abcd', operatingSystem: 'linux', osImage: 'Red Hat Enterprise Linux CoreOS 418', systemUUID: 'ec212345-6789-abcd-ef01-23456789abcd' },
    },
  };
}

async function run(): Promise<BenchResult> {
  const cluster = await startCluster({ nodes: {} });
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  try {
    for (let i = 0; i < NODES; i++) cluster.server.create(realisticNode(`node-${String(i).padStart(4, '0')}`, nodeIp(i)));
    for (let i = 0; i < RECORDS; i++) {
      cluster.server.create(dnsRecord(`record-${i}`, { dnsName: `svc-${i}.${DOMAIN}.`, targets: [`10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`] }));
    }
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
      method: `\`watch-lb-status\` (the bundle, in its own process) against the test API server holding ${NODES} Nodes (each about 11 kB of JSON like a real worker's: ${IMAGES_PER_NODE} images, conditions, labels; one InternalIP) and ${RECORDS} managed DNSRecords. RSS is VmRSS from /proc/PID/status, sampled each second for ${SETTLE_SECONDS} s after the first Corefile; time to the first render is from spawning the process to the rename that put the first Corefile in place.`,
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
