/**
 * `--diff` of a Corefile with 20,000 node records against a file that does not exist: every
 * line is added, the diff's worst case for its length. One run of the bundle; wall time and
 * the child's CPU time and peak RSS (its own process.resourceUsage(), reported at exit).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BUNDLE, figure, mib, ms, type Bench, type BenchResult } from './support.js';

const NODES = 20_000;
const TARGET_MS = 2000;
const TARGET_KIB = 200 * 1024;
const REPORT_USAGE = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('maxrss='+u.maxRSS+' cpu='+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;

function config(): string {
  const nodes = Array.from({ length: NODES }, (_, i) => `  node-${i}: [10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}]`);
  return ['domain: c1.example.com', 'loadBalancers:', '  api: [10.255.0.10]', '  apiInt: [10.255.0.20]', '  ingress: [10.255.1.30]', 'upstreams: [10.255.0.2]', 'nodes:', ...nodes, ''].join('\n');
}

async function run(): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-bench-diff-'));
  try {
    const file = join(dir, 'cluster.yaml');
    await writeFile(file, config());
    // Into a file, not a pipe: the figure is the diff's, not the pipe's.
    const diffFile = join(dir, 'diff');
    const fd = openSync(diffFile, 'w');
    const start = performance.now();
    const r = spawnSync(process.execPath, ['--import', REPORT_USAGE, BUNDLE, 'render-corefile', '--config', file, '--out', join(dir, 'missing'), '--diff'], { stdio: ['ignore', fd, 'pipe'] });
    const elapsed = performance.now() - start;
    closeSync(fd);
    if (r.status !== 0) throw new Error(`render-corefile --diff exited with ${r.status}: ${r.stderr.toString()}`);
    const added = (await readFile(diffFile, 'utf8')).split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
    const usage = /maxrss=(\d+) cpu=(\d+)/.exec(r.stderr.toString());
    const kib = Number(usage?.[1]);
    const cpuMs = Number(usage?.[2]) / 1000;
    return {
      title: '`--diff` of a large Corefile',
      method: `One \`lbdns render-corefile --config FILE --out MISSING --diff\` with ${NODES.toLocaleString('en')} nodes (${added.toLocaleString('en')} added lines), spawned by the bench; CPU time and peak RSS from the child's process.resourceUsage() at exit.`,
      figures: [
        figure('wall time', ms(elapsed), { text: `< ${TARGET_MS / 1000} s`, met: elapsed < TARGET_MS }),
        figure('CPU time (user + system)', ms(cpuMs)),
        figure('peak RSS', mib(kib), { text: `< ${TARGET_KIB / 1024} MiB`, met: kib < TARGET_KIB }),
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const largeDiff: Bench = { name: 'diff', run };
