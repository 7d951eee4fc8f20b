/**
 * Gateway DNS at scale: 10,000 Gateway listener hosts (5,000 simple, 5,000 load-balanced),
 * 200 Gateways of 50 listeners each, one DNSPolicy per Gateway. The record set, render and
 * structural check in this process; the monitor (the bundle, in its own process) for its RSS
 * and for one Gateway's address change → the zone file replaced.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { renderCorefile } from '../lib/render/corefile.js';
import { renderZones } from '../lib/render/zone-file.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { DEFAULTS, type RecordSet } from '../lib/model.js';
import type { KubeObject } from '../test/support/kube-api-server.js';
import { startCoreDns, type CoreDns } from '../test/support/coredns.js';
import { freePort } from '../test/support/peers.js';
import { fileId } from '../test/support/cluster-fixture.js';
import { dnsPolicy, gateway, KUBE_SYSTEM, NS, startFakeGatewayCluster, ZONE } from '../test/support/gateway-fixture.js';
import { CorefileWatcher, ROOT, figure, firstAnswer, median, mergePatch, ms, mib, percentile, procStats, progress, sleep, spawnMonitor, type Bench, type BenchResult } from './support.js';

const GATEWAYS = 200;
const LISTENERS = 50;
const CHANGES = 50;
const TARGETS = { renderMs: 100, patchP99Ms: 200, answerP99Ms: 3000, rssMiB: 120 } as const;


const host = (g: number, l: number): string => `h${l}.g${g}.${ZONE}`;
const address = (g: number, round = 0): string => `10.${100 + round}.${Math.floor(g / 250)}.${(g % 250) + 1}`;

const gatewayObject = (g: number, round = 0): KubeObject =>
  gateway(
    `g${g}`,
    Array.from({ length: LISTENERS }, (_, l) => ({ name: `l${l}`, hostname: host(g, l) })),
    [{ value: address(g, round) }],
  );

/** New objects each time: views are kept per object, and a render from nothing must not find them. */
export function objects(): { gateways: KubeObject[]; policies: KubeObject[] } {
  const gateways: KubeObject[] = [];
  const policies: KubeObject[] = [];
  for (let g = 0; g < GATEWAYS; g++) {
    gateways.push(gatewayObject(g));
    // Every other Gateway load-balanced: half the hosts simple, half a CNAME chain.
    policies.push(dnsPolicy(`g${g}`, { gateway: `g${g}` }, g % 2 === 0 ? {} : { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } }));
  }
  return { gateways, policies };
}

const quiet = { warn: () => undefined, flush: () => undefined };
export const BASE = specFromConfig(EXAMPLE_CONFIG, EXAMPLE_CONFIG.upstreams ?? []);

/** The sources' endpoints, the record set, then its Corefile text with the check, each timed. */
function renderFrom(inputs: GatewayInputs, previous?: RecordSet): { sourcesMs: number; recordSetMs: number; renderMs: number; recordSet: RecordSet; bytes: number } {
  const started = performance.now();
  const owners = inputs.contribution().gatewayOwners ?? [];
  const sourced = performance.now();
  const { recordSet } = buildRecordSet({ ...BASE, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map(), { previous });
  const built = performance.now();
  const served = { ...recordSet, zoneFiles: ZONE_FILES };
  const text = renderCorefile(served, builtinTemplate(), 'builtin');
  const zone = renderZones(served).get(ZONE) ?? '';
  return { sourcesMs: sourced - started, recordSetMs: built - sourced, renderMs: performance.now() - built, recordSet, bytes: text.length + zone.length };
}

/**
 * Every Gateway and DNSPolicy new: everything is computed. Only the figures are kept, as a
 * process holds one record set, not one per run.
 */
function renderAll(): Omit<ReturnType<typeof renderFrom>, 'recordSet'> & { names: number } {
  const { gateways, policies } = objects();
  const inputs = new GatewayInputs([ZONE], quiet);
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('gateways', gateways);
  inputs.set('dnspolicies', policies);
  const { recordSet, ...figures } = renderFrom(inputs);
  return { ...figures, names: recordSet.names.length };
}

/** One Gateway's address changed at a time, as the monitor sees it: the times of each change. */
function renderChanges(count: number): number[] {
  const { gateways, policies } = objects();
  const inputs = new GatewayInputs([ZONE], quiet);
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('dnspolicies', policies);
  inputs.set('gateways', gateways);
  let previous = renderFrom(inputs).recordSet;
  return Array.from({ length: count }, (_, i) => {
    gateways[i % GATEWAYS] = gatewayObject(i % GATEWAYS, i + 1);
    inputs.set('gateways', gateways);
    const r = renderFrom(inputs, previous);
    previous = r.recordSet;
    return r.sourcesMs + r.recordSetMs + r.renderMs;
  });
}

/** What each stage keeps, from bench/gateway-heap.ts in a process of its own (MiB). */
async function heapByStage(): Promise<{ sources: number; claims: number; records: number; render: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', join(ROOT, 'bench/gateway-heap.ts')], { cwd: ROOT });
  return JSON.parse(stdout) as { sources: number; claims: number; records: number; render: number };
}

const ZONE_FILES: ReadonlyMap<string, string> = new Map([[ZONE, `/var/lib/lbdns/${ZONE}.zone`]]);

async function run(): Promise<BenchResult> {
  const { gateways, policies } = objects();

  const cluster = await startFakeGatewayCluster();
  let watcher: CorefileWatcher | undefined;
  let monitor: Awaited<ReturnType<typeof spawnMonitor>> | undefined;
  let dns: CoreDns | undefined;
  try {
    for (const o of [...gateways, ...policies]) cluster.server.create(o);
    // The Gateway names are served from the zone file beside the Corefile.
    watcher = await CorefileWatcher.open(join(dirname(cluster.out), `${ZONE}.zone`));
    const last = host(GATEWAYS - 1, LISTENERS - 1);
    const first = watcher.next((text) => text.includes(`\n${last}. `), 120_000, 'the first zone file with every Gateway host');
    const [port, healthPort, readyPort] = await Promise.all([freePort(), freePort(), freePort()]);
    monitor = await spawnMonitor({ kubeconfig: cluster.kubeconfig, out: cluster.out, extra: ['--gateway-zone', ZONE, '--listen', `127.0.0.1:${port}`, '--health-port', String(healthPort), '--ready-port', String(readyPort)] });
    const firstAt = (await first).at - monitor.spawnedAt;
    dns = await startCoreDns(cluster.out, { port });
    await sleep(5000);
    const settled = await procStats(monitor.pid);
    const corefileBefore = await fileId(cluster.out);
    progress(`gateway-scale: ${CHANGES} Gateway status patches`);
    const latencies: number[] = [];
    const answers: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const ip = address(0, i);
      const written = watcher.next((text) => text.includes(` IN A ${ip}\n`), 20_000, `the zone file to serve ${ip}`);
      const start = performance.now();
      await mergePatch(cluster.server.url, `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/g0/status`, { status: { addresses: [{ type: 'IPAddress', value: ip }] } });
      latencies.push((await written).at - start);
      answers.push((await firstAnswer(dns, host(0, 0), ip, 20_000)) - start);
    }
    const p99 = percentile(latencies, 99);
    const answerP99 = percentile(answers, 99);
    const rewrites = JSON.stringify(await fileId(cluster.out)) === JSON.stringify(corefileBefore) ? 0 : 1;
    const reloads = dns.reloads();
    const afterPatches = await procStats(monitor.pid);
    await monitor.stop();
    monitor = undefined;
    // After the monitor: this process serves its API, and what lbdns keeps from the renders
    // below would otherwise lengthen that server's garbage collections inside the latencies.
    progress(`gateway-scale: ${GATEWAYS * LISTENERS} listener hosts, in process`);
    const renders = Array.from({ length: 7 }, renderAll);
    const renderMs = median(renders.map((r) => r.renderMs));
    const recordSetMs = median(renders.map((r) => r.recordSetMs));
    const sourcesMs = median(renders.map((r) => r.sourcesMs));
    const wholeMs = median(renders.map((r) => r.sourcesMs + r.recordSetMs + r.renderMs));
    const changeMs = renderChanges(CHANGES);
    const heap = await heapByStage();
    return {
      title: 'Gateway DNS scale',
      method: `${GATEWAYS} Gateways of ${LISTENERS} listener hosts (${GATEWAYS * LISTENERS} hosts: half simple, half load-balanced with the klb chain), one DNSPolicy each. In this process, median of ${renders.length} from new objects (nothing kept applies): the Gateway sources' endpoints, the record set, and the render (the Corefile with its check, and the zone file's records), each timed (${renders[0]?.names ?? 0} names in the record set); then ${CHANGES} changes of one Gateway's address each, sources to checked text, in this process; the live heap each stage adds, in a process of its own (bench/gateway-heap.ts). Monitor, measured first (this process then holds nothing of lbdns while it serves the API): the bundle in its own process with --gateway-zone; RSS (VmRSS) 5 s after its first zone file with every host; ${CHANGES} merge patches of one Gateway's status.addresses over HTTP, each timed to the rename that put a zone file serving the new address in place, and to the first answer with it from real CoreDNS serving the monitor's files (asked every 10 ms); the Corefile's inode and mtime and CoreDNS's "Reloading complete" lines counted over the patches.`,
      figures: [
        figure('render: record set → checked Corefile and zone records, 10,000 hosts', ms(renderMs), { text: `≤ ${TARGETS.renderMs} ms`, met: renderMs <= TARGETS.renderMs }),
        figure('record set: endpoints → names served (claims, chains, records)', ms(recordSetMs)),
        figure(`sources: ${GATEWAYS} Gateways and DNSPolicies → endpoints`, ms(sourcesMs)),
        figure('all three, from new objects', ms(wholeMs)),
        figure('one Gateway changed: sources to checked text, p50 / max', `${ms(median(changeMs))} / ${ms(Math.max(...changeMs))}`),
        figure('heap kept: sources / claims / record set / render', [heap.sources, heap.claims, heap.records, heap.render].map((m) => `${m.toFixed(1)} MiB`).join(' / ')),
        figure('Corefile and zone file, bytes', `${((renders[0]?.bytes ?? 0) / 1e6).toFixed(2)} MB`),
        figure('monitor: first zone file with every host, from spawn', ms(firstAt)),
        figure('monitor: RSS after the first Corefile', mib(settled.rssKiB), { text: `≤ ${TARGETS.rssMiB} MiB`, met: settled.rssKiB / 1024 <= TARGETS.rssMiB }),
        figure(`monitor: RSS after the ${CHANGES} patches`, mib(afterPatches.rssKiB), { text: `≤ ${TARGETS.rssMiB} MiB`, met: afterPatches.rssKiB / 1024 <= TARGETS.rssMiB }),
        figure('Gateway status patch → zone file replaced, p50 / p99', `${ms(median(latencies))} / ${ms(p99)}`, { text: `p99 ≤ ${TARGETS.patchP99Ms} ms`, met: p99 <= TARGETS.patchP99Ms }),
        figure('Gateway status patch → real CoreDNS answers the new address, p50 / p99', `${ms(median(answers))} / ${ms(answerP99)}`, { text: `p99 ≤ ${TARGETS.answerP99Ms} ms`, met: answerP99 <= TARGETS.answerP99Ms }),
        figure(`Corefile rewrites and CoreDNS reloads over the ${CHANGES} patches`, `${rewrites} / ${reloads}`, { text: '0 / 0', met: rewrites === 0 && reloads === 0 }),
      ],
    };
  } finally {
    await dns?.close();
    await monitor?.stop();
    watcher?.close();
    await cluster.close();
  }
}

export const gatewayScale: Bench = { name: 'gateway-scale', run };
