/**
 * What tenants' Gateway names cost the cluster's own names, paid by real CoreDNS: the files
 * lbdns renders for 0, 100, 1,000 and 10,000 Gateway listener hosts (half simple, half
 * load-balanced, 50 listeners per Gateway) served by CoreDNS, and `dnsperf` asking one name
 * at a time; CoreDNS's RSS after. Ratios are against the same cluster without Gateway hosts,
 * measured in the same run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { renderCorefile } from '../lib/render/corefile.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { renderZones } from '../lib/render/zone-file.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { weightFilePath, writeWeightFile } from '../lib/sinks/weight-file-output.js';
import { writeZoneFiles, zoneFilePaths } from '../lib/sinks/zone-file-output.js';
import { DEFAULTS, type ClusterSpec } from '../lib/model.js';
import { startCoreDns, type CoreDns } from '../test/support/coredns.js';
import { freePort } from '../test/support/peers.js';
import { dnsPolicy, gateway, KUBE_SYSTEM, ZONE } from '../test/support/gateway-fixture.js';
import { BASE } from './gateway-scale.js';
import { figure, procStats, progress, type Bench, type BenchResult, type Figure } from './support.js';

const LISTENERS = 50;
const SIZES = [100, 1000, 10_000] as const;
const SECONDS = Number(process.env.BENCH_DNSPERF_SECONDS ?? 3);
const TARGETS = { ownRatio: 0.8, gatewayRatio: 0.5, rssRatio: 1.3 } as const;

/** The cluster's own names, each a different path through the main server block. */
const OWN = {
  api: `api.${BASE.domain}`,
  'api-int': `api-int.${BASE.domain}`,
  '*.apps': `console.apps.${BASE.domain}`,
  node: `${BASE.nodes[0]?.name ?? 'master-0'}.${BASE.domain}`,
} as const;
/** Gateway 0 is simple, Gateway 1 load-balanced (every other one is). */
const GATEWAY_NAMES = { 'simple Gateway host': `h0.g0.${ZONE}`, 'load-balanced Gateway host': `h0.g1.${ZONE}` } as const;

function ownersFor(hosts: number) {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  const gateways = Array.from({ length: hosts / LISTENERS }, (_, g) =>
    gateway(`g${g}`, Array.from({ length: LISTENERS }, (_, l) => ({ name: `l${l}`, hostname: `h${l}.g${g}.${ZONE}` })), [{ value: `10.100.${Math.floor(g / 250)}.${(g % 250) + 1}` }]),
  );
  const policies = gateways.map((_, g) => dnsPolicy(`g${g}`, { gateway: `g${g}` }, g % 2 === 0 ? {} : { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } }));
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('gateways', gateways);
  inputs.set('dnspolicies', policies);
  return inputs.contribution().gatewayOwners ?? [];
}

/**
 * The files lbdns writes for `hosts` Gateway hosts (none: the cluster without Gateway DNS),
 * served by real CoreDNS. `cache` lines are taken out: the figures are CoreDNS's own work per
 * query, not its cache's.
 */
async function serve(hosts: number): Promise<{ dns: CoreDns; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-bench-coredns-'));
  const corefile = join(dir, 'Corefile');
  const [port, healthPort, readyPort, upstream] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const spec: ClusterSpec = {
    ...BASE,
    upstreams: [`127.0.0.1:${upstream}`],
    listen: { address: '127.0.0.1', port },
    healthPort,
    readyPort,
    ...(hosts > 0 ? { gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners: ownersFor(hosts) } } : {}),
  };
  const { recordSet } = buildRecordSet(spec, new Map());
  const served = hosts > 0 ? { ...recordSet, weightFile: weightFilePath(corefile), zoneFiles: zoneFilePaths(corefile, [ZONE]) } : recordSet;
  if (hosts > 0) {
    await writeWeightFile(served.weightFile as string, served.weights ?? []);
    await writeZoneFiles(served, renderZones(served));
  }
  await writeFile(corefile, renderCorefile(served, builtinTemplate(), 'builtin').replace(/^\s*cache \d+\n/gm, ''));
  return { dns: await startCoreDns(corefile, { port }), dir };
}

/** dnsperf asking `name A` for SECONDS with 4 clients: queries answered per second. */
async function qps(dns: CoreDns, name: string, dir: string): Promise<number> {
  const data = join(dir, 'queries');
  await writeFile(data, `${name} A\n`);
  const { stdout } = await promisify(execFile)('dnsperf', ['-s', dns.host, '-p', String(dns.port), '-d', data, '-l', String(SECONDS), '-c', '4', '-T', '2', '-q', '200'], { maxBuffer: 1 << 20 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new Error('dnsperf is not installed: run "make test-deps" (as root; installs dnsperf), which "make bench" does');
    throw err;
  });
  const sent = Number(/Queries sent:\s+(\d+)/.exec(stdout)?.[1] ?? Number.NaN);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1] ?? Number.NaN);
  const rate = Number(/Queries per second:\s+([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
  // The queries still in flight when the time is up are counted lost: a handful, not a failing server.
  if (!Number.isFinite(rate) || !(lost <= Math.max(10, sent * 1e-4))) throw new Error(`dnsperf for ${name}: ${lost} of ${sent} lost\n${stdout}`);
  return rate;
}

interface Measured {
  readonly qps: Readonly<Record<string, number>>;
  readonly rssKiB: number;
}

async function measure(hosts: number): Promise<Measured> {
  progress(`coredns-scale: ${hosts} Gateway hosts`);
  const { dns, dir } = await serve(hosts);
  try {
    const names: Record<string, string> = { ...OWN, ...(hosts > 0 ? GATEWAY_NAMES : {}) };
    const rates: Record<string, number> = {};
    for (const [what, name] of Object.entries(names)) rates[what] = await qps(dns, name, dir);
    return { qps: rates, rssKiB: (await procStats(dns.pid)).rssKiB };
  } finally {
    await dns.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const rate = (q: number): string => `${Math.round(q).toLocaleString('en-US')} q/s`;

async function run(): Promise<BenchResult> {
  const without = await measure(0);
  const figures: Figure[] = Object.keys(OWN).map((what) => figure(`${what}, without Gateway hosts`, rate(without.qps[what] as number)));
  figures.push(figure('CoreDNS RSS without Gateway hosts', `${(without.rssKiB / 1024).toFixed(1)} MiB`));
  const api = without.qps.api as number;
  for (const hosts of SIZES) {
    const withHosts = await measure(hosts);
    const at = `${hosts.toLocaleString('en-US')} hosts`;
    for (const what of Object.keys(OWN)) {
      const ratio = (withHosts.qps[what] as number) / (without.qps[what] as number);
      figures.push(figure(`${what}, ${at}: q/s and ratio to without`, `${rate(withHosts.qps[what] as number)}, ${ratio.toFixed(2)}×`, { text: `≥ ${TARGETS.ownRatio}×`, met: ratio >= TARGETS.ownRatio }));
    }
    for (const what of Object.keys(GATEWAY_NAMES)) {
      const ratio = (withHosts.qps[what] as number) / api;
      figures.push(figure(`${what}, ${at}: q/s and ratio to api without`, `${rate(withHosts.qps[what] as number)}, ${ratio.toFixed(2)}×`, { text: `≥ ${TARGETS.gatewayRatio}×`, met: ratio >= TARGETS.gatewayRatio }));
    }
    const rss = withHosts.rssKiB / without.rssKiB;
    figures.push(figure(`CoreDNS RSS, ${at}, and ratio to without`, `${(withHosts.rssKiB / 1024).toFixed(1)} MiB, ${rss.toFixed(2)}×`, { text: `≤ ${TARGETS.rssRatio}×`, met: rss <= TARGETS.rssRatio }));
  }
  return {
    title: 'Gateway DNS on real CoreDNS: what tenant names cost the cluster',
    method: `The files lbdns renders (Corefile, zone file, weight file) for the example cluster alone and with ${SIZES.join(', ')} Gateway listener hosts (Gateways of ${LISTENERS} listeners, every other one load-balanced), the Corefile's cache lines taken out, served by CoreDNS (make peers) on loopback; for each name, \`dnsperf -l ${SECONDS} -c 4 -T 2 -q 200\` asking it for A, one name at a time, none lost but those in flight at the end; CoreDNS's RSS (VmRSS) after its queries. One run; ratios within it.`,
    figures,
  };
}

export const corednsScale: Bench = { name: 'coredns-scale', run };
