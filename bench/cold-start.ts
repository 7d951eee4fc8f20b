/**
 * Cold start: `lbdns render-corefile` from a local config file to a file, against bare
 * `node -e ''`, the two interleaved so both see the same machine load.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BUNDLE, figure, median, ms, percentile, progress, type Bench, type BenchResult } from './support.js';

// 60: on this shared VM, medians of 30 moved by ±0.05× from one run to the next.
const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 60);
const TARGET_RATIO = 1.6;

/** 3 names (api, api-int, *.apps) and 5 nodes, all IP literals: nothing to resolve. */
const CONFIG = `domain: c1.example.com
loadBalancers:
  api: [10.0.0.10]
  apiInt: [10.0.0.20]
  ingress: [10.0.1.30]
nodes:
  master-0: [10.0.0.5]
  master-1: [10.0.0.6]
  master-2: [10.0.0.7]
  worker-0: [10.0.0.8]
  worker-1: [10.0.0.9]
upstreams: [10.0.0.2]
`;

const FLAGS = ['--domain', 'c1.example.com', '--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--upstream', '10.0.0.2'];

interface Variant {
  readonly label: string;
  readonly argv: readonly string[];
  /** Removed before each run, so every run writes it. */
  readonly out?: string;
}

function timeRun(v: Variant): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, v.argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - start;
  if (r.status !== 0) throw new Error(`${v.label} exited with ${r.status}: ${r.stderr.toString()}`);
  return elapsed;
}

async function run(): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-bench-cold-'));
  try {
    const config = join(dir, 'cluster.yaml');
    await writeFile(config, CONFIG);
    const out = join(dir, 'Corefile');
    const flagsOut = join(dir, 'Corefile.flags');
    const nodeFlags = ['master-0=10.0.0.5', 'master-1=10.0.0.6', 'master-2=10.0.0.7', 'worker-0=10.0.0.8', 'worker-1=10.0.0.9'].flatMap((n) => ['--node', n]);
    const variants: Variant[] = [
      { label: "node -e ''", argv: ['-e', ''] },
      { label: 'render-corefile --config FILE --out FILE', argv: [BUNDLE, 'render-corefile', '--config', config, '--out', out], out },
      { label: 'render-corefile FLAGS --out FILE', argv: [BUNDLE, 'render-corefile', ...FLAGS, ...nodeFlags, '--out', flagsOut], out: flagsOut },
    ];
    const times = variants.map((): number[] => []);
    for (const v of variants) timeRun(v);
    progress(`cold start: ${RUNS} interleaved runs of ${variants.length} commands`);
    for (let i = 0; i < RUNS; i++) {
      for (const [j, v] of variants.entries()) {
        if (v.out) await rm(v.out, { force: true });
        times[j]?.push(timeRun(v));
      }
    }
    const [bare, config_, flags] = times.map((t) => median(t)) as [number, number, number];
    const ratio = config_ / bare;
    return {
      title: 'Cold start',
      method: `Median wall time of ${RUNS} runs each, interleaved, every run a fresh \`node\` process spawned by the bench; the output file is removed before each run so every run writes it (temp file, fsync, rename). Config: 3 names and 5 nodes, IP literals.`,
      figures: [
        figure("`node -e ''`", `${ms(bare)} (p90 ${ms(percentile(times[0] ?? [], 90))})`),
        figure('`lbdns render-corefile --config FILE --out FILE`', `${ms(config_)} (p90 ${ms(percentile(times[1] ?? [], 90))})`),
        figure('… against bare Node', `${ratio.toFixed(2)}×`, { text: `≤ ${TARGET_RATIO}×`, met: ratio <= TARGET_RATIO }),
        figure('`lbdns render-corefile` with flags, no config file', `${ms(flags)} (${(flags / bare).toFixed(2)}×)`),
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const coldStart: Bench = { name: 'cold-start', run };
