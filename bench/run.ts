/**
 * `make bench`: runs every benchmark (or those named: `node --import tsx bench/run.ts
 * cold-start scale`) and prints their figures as Markdown, each with its target and whether
 * it is met. Nothing here fails on a figure: these are measurements, not timed tests. It
 * exits non-zero only when a benchmark could not run.
 */
import { apiScale } from './api-scale.js';
import { gatewayScale } from './gateway-scale.js';
import { corednsScale } from './coredns-scale.js';
import { coldStart } from './cold-start.js';
import { largeDiff } from './diff.js';
import { drift } from './drift.js';
import { idle } from './idle.js';
import { memory } from './memory.js';
import { propagation } from './propagation.js';
import { scale } from './scale.js';
import { closeHttpAgent, machine, progress, type Bench, type BenchResult } from './support.js';

// Scale runs in this process: before memory, whose 5,000 large Nodes would leave this heap big and its GC slower.
const BENCHES: readonly Bench[] = [coldStart, largeDiff, scale, propagation, drift, idle, memory, apiScale, gatewayScale, corednsScale];

function table(result: BenchResult): string {
  const rows = result.figures.map((f) => `| ${f.name} | ${f.value} | ${f.target ?? ''} | ${f.met === undefined ? '' : f.met ? 'met' : '**missed**'} |`);
  return [`### ${result.title}`, '', '| figure | value | target | |', '| --- | --- | --- | --- |', ...rows, '', result.method, ''].join('\n');
}

async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark: ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  const selected = names.length === 0 ? BENCHES : BENCHES.filter((b) => names.includes(b.name));
  const m = await machine();
  const started = new Date();
  const command = names.length === 0 ? 'make bench' : `node --import tsx bench/run.ts ${names.join(' ')}`;
  const env = ['BENCH_BUNDLE', 'BENCH_DNSPERF_SECONDS', 'BENCH_PROPAGATION_CHANGES', 'BENCH_IDLE_SECONDS', 'BENCH_DRIFT_SECONDS', 'BENCH_COLD_RUNS', 'BENCH_API_RUNS'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`);
  process.stdout.write(
    [
      `## lbdns benchmarks, ${started.toISOString().slice(0, 10)}`,
      '',
      `- command: \`${[...env, command].join(' ')}\``,
      `- machine: ${m.cpus} CPUs (${m.model}), ${m.memory} RAM, Linux ${m.kernel}`,
      `- node: ${m.node}`,
      `- load average at start: ${m.loadAverage}`,
      '',
      '',
    ].join('\n'),
  );
  let failed = 0;
  for (const bench of selected) {
    progress(`${bench.name}…`);
    try {
      process.stdout.write(`${table(await bench.run())}\n`);
    } catch (err) {
      failed += 1;
      process.stdout.write(`### ${bench.name}\n\nCould not run: ${(err as Error).stack ?? String(err)}\n\n`);
    }
  }
  closeHttpAgent();
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
