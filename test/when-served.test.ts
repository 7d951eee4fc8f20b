/**
 * A collection whose CRD may come and go (watchWhenServed): a 404 met by a running watch is
 * believed only once a later probe meets it too. Installing and removing the real CRD is
 * specified in hosted-net-services.test.ts on the real kube-apiserver; a 404 for a moment
 * cannot be made on demand there, so the test API server answers it here.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { listJson } from '../lib/kube/list-json.js';
import { watchWhenServed } from '../lib/kube/when-served.js';
import type { WatchedCollection } from '../lib/kube/informer.js';
import { createLogger } from '../lib/runtime/log.js';
import { sleep, startFakeCluster, until, type FakeClusterFixture } from './support/cluster-fixture.js';

const PROBE_MS = 300;

interface Seen {
  readonly changes: string[][];
  absent: number;
}

async function withWatched(body: (c: FakeClusterFixture, w: WatchedCollection<KubernetesObject>, seen: Seen) => Promise<void>): Promise<void> {
  const cluster = await startFakeCluster({ nodes: { 'master-0': ['10.0.0.5'] } });
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const seen: Seen = { changes: [], absent: 0 };
  const watched = await watchWhenServed<KubernetesObject>({
    kc,
    name: 'nodes',
    what: 'list nodes',
    path: '/api/v1/nodes',
    list: (page) => listJson(kc, '/api/v1/nodes', page, true),
    log: createLogger({ write: () => true }),
    onChange: (items) => seen.changes.push(items.map((i) => i.metadata?.name ?? '')),
    probeMs: PROBE_MS,
    onAbsent: () => {
      seen.absent += 1;
    },
    onServed: () => undefined,
    onProbeFailed: () => undefined,
  });
  try {
    await body(cluster, watched, seen);
  } finally {
    await watched.stop();
    await cluster.close();
  }
}

test('a 404 for a moment (an API server that has not registered the CRDs yet) keeps the objects: nothing is read as absent', async () => {
  await withWatched(async (c, w, seen) => {
    c.server.failNext({ verb: 'watch' }, 404);
    c.server.closeWatches();
    await until('the watch again', () => c.server.requests.filter((r) => r.watch && r.status === 200).length >= 2, 5000);
    await sleep(PROBE_MS);
    assert.is(seen.absent, 0);
    assert.ok(seen.changes.every((names) => names.includes('master-0')), JSON.stringify(seen.changes));
    assert.equal(w.items().map((i) => i.metadata?.name), ['master-0']);
  });
});

test('a 404 a probe still meets later (the CRD removed) empties the collection and reads it as absent', async () => {
  await withWatched(async (c, w, seen) => {
    c.server.failNext({ pathIncludes: '/api/v1/nodes' }, 404, 100);
    c.server.closeWatches();
    await until('read as absent', () => seen.absent === 1, 5000);
    assert.equal(seen.changes.at(-1), []);
    assert.equal(w.items(), []);
  });
});

test('after a 404 for a moment, watches refused for a while (429) hold nothing up: the collection stays synced with the objects it held', async () => {
  await withWatched(async (c, w) => {
    c.server.failNext({ verb: 'watch' }, 404);
    c.server.failNext({ verb: 'watch' }, 429, 1000);
    c.server.closeWatches();
    await until('a refused watch after the probe', () => c.server.requests.filter((r) => r.watch && r.status === 429).length >= 2, 5000);
    assert.ok(w.synced());
    assert.equal(w.items().map((i) => i.metadata?.name), ['master-0']);
  });
});

test.run();
