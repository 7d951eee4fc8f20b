/**
 * Scale: the pure core on growing node counts, in this process. "Render" is what the
 * monitor does for each change: record set → Corefile text, structurally checked.
 */
import { performance } from 'node:perf_hooks';
import type { V1Node } from '@kubernetes/client-node';
import { DEFAULTS, type ClusterSpec } from '../lib/model.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { nodesContribution } from '../lib/sources/nodes.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { node } from '../test/support/cluster-fixture.js';
import { figure, median, ms, progress, type Bench, type BenchResult } from './support.js';

const SIZES = [10, 100, 1000, 10_000] as const;
const TARGET_MS_AT_10000 = 50;
/** Per-node cost at 10,000 within this factor of the cost at 1,000 counts as linear. */
const LINEAR_SLACK = 1.5;
const BUDGET_MS = 1500;

const nodeName = (i: number): string => `node-${String(i).padStart(5, '0')}`;
const nodeIp = (i: number): string => `10.${1 + Math.floor(i / 62_500)}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;

function spec(nodes: number): ClusterSpec {
  return {
    domain: 'c1.example.com',
    role: 'control-plane',
    lbs: { api: [{ kind: 'ip', ip: '10.0.0.10' }], 'api-int': [{ kind: 'ip', ip: '10.0.0.20' }], ingress: [{ kind: 'ip', ip: '10.0.1.30' }] },
    extraRecords: [],
    nodes: Array.from({ length: nodes }, (_, i) => ({ name: nodeName(i), ips: [nodeIp(i)] })),
    upstreams: ['10.0.0.2'],
    ttl: DEFAULTS.ttl,
    reload: DEFAULTS.reload,
  };
}

/** Median of as many runs as fit in the budget (at least 5), after one warm-up run. */
function timeIt(fn: () => void): number {
  fn();
  const times: number[] = [];
  const start = performance.now();
  while (times.length < 5 || (performance.now() - start < BUDGET_MS && times.length < 500)) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

async function run(): Promise<BenchResult> {
  const template = builtinTemplate();
  const noResolutions = new Map();
  const rows: { size: number; render: number; recompute: number }[] = [];
  for (const size of SIZES) {
    progress(`scale: ${size} nodes`);
    const s = spec(size);
    const render = timeIt(() => {
      renderCorefile(buildRecordSet(s, noResolutions).recordSet, template, 'builtin');
    });
    const objects = Array.from({ length: size }, (_, i) => node(nodeName(i), [nodeIp(i)]) as V1Node);
    const recompute = timeIt(() => {
      const { nodes } = nodesContribution(objects, () => undefined, s.domain);
      renderCorefile(buildRecordSet({ ...s, nodes: nodes ?? [] }, noResolutions).recordSet, template, 'builtin');
    });
    rows.push({ size, render, recompute });
  }
  const at = (size: number) => rows.find((r) => r.size === size) as { size: number; render: number; recompute: number };
  const perNode = (size: number) => at(size).render / size;
  const growth = perNode(10_000) / perNode(1000);
  return {
    title: 'Scale',
    method: `Render = \`buildRecordSet\` + \`renderCorefile\` (built-in template and the structural check) for N node records, one IPv4 each, plus api, api-int and *.apps; median of as many runs as fit in ${BUDGET_MS / 1000} s (at least 5) after a warm-up, in one process. "Recompute" adds \`nodesContribution\` over N Node objects: what the monitor does for one Node event.`,
    figures: [
      ...rows.map((r) =>
        figure(`render, ${r.size.toLocaleString('en')} nodes`, `${ms(r.render)} (${((r.render / r.size) * 1000).toFixed(2)} µs/node)`, r.size === 10_000 ? { text: `≤ ${TARGET_MS_AT_10000} ms`, met: r.render <= TARGET_MS_AT_10000 } : undefined),
      ),
      figure('growth 1,000 → 10,000 (per-node time ratio)', `${growth.toFixed(2)}`, { text: `linear (≤ ${LINEAR_SLACK})`, met: growth <= LINEAR_SLACK }),
      ...rows.map((r) => figure(`recompute, ${r.size.toLocaleString('en')} nodes`, ms(r.recompute))),
    ],
  };
}

export const scale: Bench = { name: 'scale', run };
