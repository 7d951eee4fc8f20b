import { test } from 'uvu';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as assert from 'uvu/assert';
import { KubeConfig, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { watchCollection, type WatchedCollection } from '../lib/kube/informer.js';
import { listJson } from '../lib/kube/list-json.js';
import { createLogger } from '../lib/runtime/log.js';
import { nodeProjection } from '../lib/sources/nodes.js';
import { node, sleep, startCluster, startFakeCluster, until, type ClusterAccess } from './support/cluster-fixture.js';
import type { ApiServer } from './support/apiserver.js';

const quiet = createLogger({ write: () => true });

interface Watched {
  readonly collection: WatchedCollection<KubernetesObject>;
  /** How many times the collection reported a change after its first list. */
  changes(): number;
}

/** The Nodes collection in pages of one, for a test's own list function. */
const NODES_IN_PAGES_OF_ONE = { name: 'nodes', what: 'list nodes', path: '/api/v1/nodes', pageSize: 1 } as const;

/** A client of the cluster, and the resourceVersion its Nodes list is at. */
async function pagedNodesOf(cluster: Awaited<ReturnType<typeof startCluster>>): Promise<{ kc: KubeConfig; resourceVersion: string }> {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const { metadata } = await cluster.server.call<{ metadata: { resourceVersion: string } }>('GET', '/api/v1/nodes');
  return { kc, resourceVersion: metadata.resourceVersion };
}

async function withNodes<C extends ClusterAccess & { close(): Promise<void> }>(start: () => Promise<C>, pageSize: number | undefined, body: (c: C, w: Watched) => Promise<void>, prepare?: (kc: KubeConfig) => void): Promise<void> {
  const cluster = await start();
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  prepare?.(kc);
  let reported = 0;
  const collection = await watchCollection<KubernetesObject>({
    kc,
    name: 'nodes',
    what: 'list nodes',
    path: '/api/v1/nodes',
    list: ({ onContinue, ...page }) => listJson(kc, '/api/v1/nodes', page, true, onContinue),
    ...(pageSize === undefined ? {} : { pageSize }),
    project: (obj) => nodeProjection(obj as V1Node),
    log: quiet,
    onChange: () => {
      reported += 1;
    },
  });
  try {
    await body(cluster, { collection, changes: () => reported - 1 });
  } finally {
    await collection.stop();
    await cluster.close();
  }
}

const NODES = { 'master-0': ['10.0.0.5'], 'master-1': ['10.0.0.6'], 'master-2': ['10.0.0.7'], 'worker-0': ['10.0.0.8'], 'worker-1': ['10.0.0.9'] };
const real = (nodes: Record<string, string[]>) => () => startCluster({ nodes });

/** The node requests the audit log recorded, with their query. */
async function nodeRequests(server: ApiServer, verb: 'list' | 'watch'): Promise<URLSearchParams[]> {
  return (await server.requests()).filter((r) => r.resource === 'nodes' && r.verb === verb && r.name === undefined).map((r) => new URL(r.uri, 'https://x').searchParams);
}
const names = (items: readonly KubernetesObject[]) => items.map((i) => i.metadata?.name).sort();

test('a collection listed in pages holds every object, one request per page', async () => {
  await withNodes(real(NODES), 2, async (c, w) => {
    assert.equal(names(w.collection.items()), Object.keys(NODES));
    const lists = await nodeRequests(c.server, 'list');
    assert.equal(lists.map((q) => q.get('limit')), ['2', '2', '2']);
  });
});

test('watches ask the server to end them after 5 to 10 minutes, with bookmarks', async () => {
  await withNodes(real(NODES), undefined, async (c) => {
    await until('the watch', async () => (await nodeRequests(c.server, 'watch')).length > 0);
    for (const q of await nodeRequests(c.server, 'watch')) {
      const timeout = Number(q.get('timeoutSeconds'));
      assert.ok(timeout >= 300 && timeout < 600, `timeoutSeconds=${q.get('timeoutSeconds')}`);
      assert.is(q.get('allowWatchBookmarks'), 'true');
    }
  });
});

// The test API server: a real one cannot be made to end its watches on demand.
test('a watch the server ends is reopened from where it was, without listing again', async () => {
  await withNodes(() => startFakeCluster({ nodes: NODES }), undefined, async (c, w) => {
    const lists = () => c.server.requests.filter((r) => r.path === '/api/v1/nodes' && !r.watch).length;
    const before = lists();
    c.server.closeWatches();
    await sleep(100);
    c.server.create(node('worker-2', ['10.0.0.10']));
    await until('the node added after the watch ended', () => names(w.collection.items()).includes('worker-2'));
    assert.is(lists(), before);
  });
});

test('a watch that fails is restarted after its backoff, and what changed meanwhile is seen', async () => {
  await withNodes(() => startFakeCluster({ nodes: NODES }), undefined, async (c, w) => {
    c.server.failNext({ verb: 'watch' }, 500, 2);
    c.server.closeWatches();
    await until('the failed watches', () => c.server.requests.filter((r) => r.verb === 'watch' && r.status === 500).length === 2, 5000);
    c.server.create(node('worker-2', ['10.0.0.10']));
    await until('the node added after the failures', () => names(w.collection.items()).includes('worker-2'), 5000);
  });
});

test('a relist that finds every object changed reports the change once, not once per object', async () => {
  await withNodes(() => startFakeCluster({ nodes: NODES }), undefined, async (c, w) => {
    // The watch fails, and is asked for again after its backoff with a new list.
    c.server.failNext({ verb: 'watch' }, 500, 1);
    c.server.closeWatches();
    await until('the failed watch', () => c.server.requests.some((r) => r.verb === 'watch' && r.status === 500), 5000);
    const before = w.changes();
    for (const name of Object.keys(NODES)) c.server.patchStatus({ resource: 'nodes', name }, { addresses: [{ type: 'InternalIP', address: '10.1.0.1' }] });
    await until('the relist', () => w.collection.items().every((n) => JSON.stringify(n).includes('10.1.0.1')), 5000);
    assert.is(w.changes() - before, 1);
  });
});

test('a watch whose request cannot be prepared (a credential plugin failing) is retried after its backoff, and what changed meanwhile is seen', async () => {
  let failing = false;
  const prepare = (kc: KubeConfig) => {
    const apply = kc.applyToFetchOptions.bind(kc);
    kc.applyToFetchOptions = (o) => (failing ? Promise.reject(new Error('exec plugin failed')) : apply(o));
  };
  await withNodes(
    () => startFakeCluster({ nodes: NODES }),
    undefined,
    async (c, w) => {
      const watches = () => c.server.requests.filter((r) => r.watch).length;
      failing = true;
      const before = watches();
      c.server.closeWatches();
      await sleep(1200);
      failing = false;
      await until('the watch again', () => watches() > before, 5000);
      c.server.create(node('worker-2', ['10.0.0.10']));
      await until('the node added after the failures', () => names(w.collection.items()).includes('worker-2'), 5000);
    },
    prepare,
  );
});

/** A collection watched on a server that lists nothing and answers every watch with `watch`; how many watches it was asked for. */
async function watchesAgainst(watch: (res: ServerResponse) => void, forMs: number, answerMs?: number): Promise<number> {
  let watches = 0;
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') {
      watches += 1;
      watch(res);
      return;
    }
    res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const collection = await watchCollection<KubernetesObject>({ kc, name: 'nodes', what: 'list nodes', path: '/api/v1/nodes', list: (page) => listJson(kc, '/api/v1/nodes', page, true), log: quiet, onChange: () => undefined, ...(answerMs === undefined ? {} : { answerMs }) });
  try {
    await sleep(forMs);
    return watches;
  } finally {
    await collection.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('objects without metadata.name, in a list or a watch event, are passed over with a warning: the collection syncs and keeps the others', async () => {
  const node = (name: string) => ({ kind: 'Node', apiVersion: 'v1', metadata: { name, resourceVersion: '6' } });
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') {
      res.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Node' } })}\n${JSON.stringify({ type: 'ADDED', object: null })}\n${JSON.stringify({ type: 'ADDED', object: node('n2') })}\n`);
      return;
    }
    res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [null, {}, node('n1')] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const lines: string[] = [];
  const collection = await watchCollection<KubernetesObject>({ kc, name: 'nodes', what: 'list nodes', path: '/api/v1/nodes', list: (page) => listJson(kc, '/api/v1/nodes', page, true), log: createLogger({ write: (line: string) => lines.push(line) }), onChange: () => undefined });
  try {
    await until('both named nodes', () => names(collection.items()).join() === 'n1,n2', 5000);
    assert.ok(collection.synced());
    assert.is(lines.filter((l) => l.includes('ignored an object without metadata.name')).length, 4);
  } finally {
    await collection.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

// A backoff from 0.5 s doubling (± 20 %) asks at about 0, 0.5, 1.5 and 3.5 s: 4 watches in 3.7 s; one stuck at 0.5 s, 8.
test('a watch the API server refuses inside its stream (an ERROR event) is asked for again after a growing backoff', async () => {
  const watches = await watchesAgainst((res) => res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, message: 'etcdserver: request timed out' } })}\n`), 3700);
  assert.ok(watches >= 3 && watches <= 5, `${watches} watches in 3.7 s`);
});

test('a watch the API server ends as soon as it begins, empty, is asked for again after a growing backoff', async () => {
  const watches = await watchesAgainst((res) => res.end(), 3700);
  assert.ok(watches >= 3 && watches <= 5, `${watches} watches in 3.7 s`);
});

test('a watch the API server accepts and never answers is given up after its answer time and asked for again', async () => {
  const watches = await watchesAgainst(() => undefined, 2500, 500);
  assert.ok(watches >= 2, `${watches} watches in 2.5 s, each unanswered`);
});

test('a one-shot read (readAtList) has its list as soon as it arrives, whether or not its watch is ever answered: a proxy holding the watch does not hold it', async () => {
  const node = { kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1', resourceVersion: '5' } };
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') return; // taken, never answered
    res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [node] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const started = Date.now();
  const collection = await watchCollection<KubernetesObject>({ kc, name: 'nodes', what: 'list nodes', path: '/api/v1/nodes', list: (page) => listJson(kc, '/api/v1/nodes', page, true), log: quiet, onChange: () => undefined, answerMs: 30_000, readAtList: true });
  try {
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    assert.ok(collection.synced());
    assert.equal(names(collection.items()), ['n1']);
  } finally {
    await collection.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a watching collection whose watch the API refuses (403) after its list is not read, and says why: a list no change would ever reach is not served as current', async () => {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') {
      res.statusCode = 403;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'nodes is forbidden: cannot watch resource "nodes"' }));
      return;
    }
    res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [{ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1', resourceVersion: '5' } }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const collection = await watchCollection<KubernetesObject>({ kc, name: 'nodes', what: 'list nodes', path: '/api/v1/nodes', list: (page) => listJson(kc, '/api/v1/nodes', page, true), log: quiet, onChange: () => undefined });
  try {
    assert.not.ok(collection.synced());
    assert.match(collection.lastError()?.message ?? '', 'forbidden');
  } finally {
    await collection.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the cache keeps only what the projection keeps of each object', async () => {
  await withNodes(real({ 'master-0': ['10.0.0.5'] }), undefined, async (_c, w) => {
    const [cached] = w.collection.items() as V1Node[];
    assert.equal(Object.keys(cached ?? {}).sort(), ['metadata', 'status']);
    assert.equal(cached?.status?.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, null]);
  });
});

test('an update that leaves the projection as it was is not reported', async () => {
  await withNodes(real({ 'master-0': ['10.0.0.5'] }), undefined, async (c, w) => {
    await c.server.patchStatus({ resource: 'nodes', name: 'master-0' }, { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-11-20T10:00:00Z' }] });
    await sleep(300);
    assert.is(w.changes(), 0);
  });
});

test('an update to what the projection keeps is reported, and cached', async () => {
  await withNodes(real({ 'master-0': ['10.0.0.5'] }), undefined, async (c, w) => {
    await c.server.update(node('master-0', ['10.0.0.50']));
    await until('the change to be reported', () => w.changes() === 1);
    const [cached] = w.collection.items() as V1Node[];
    assert.is(cached?.status?.addresses?.[0]?.address, '10.0.0.50');
  });
});


/** One page of a Node list holding one Node, with the token to the next page if there is one. */
const nodePage = (resourceVersion: string, name: string, token?: string) => ({
  apiVersion: 'v1',
  kind: 'NodeList',
  metadata: { resourceVersion, ...(token ? { continue: token } : {}) },
  items: [{ apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: '1' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } }],
});

test('the next page is asked for as soon as its token arrives, while the page before is still being read', async () => {
  const cluster = await startCluster({ nodes: {} });
  const { kc, resourceVersion } = await pagedNodesOf(cluster);
  const asked: (string | undefined)[] = [];
  let secondAsked: () => void = () => undefined;
  const second = new Promise<void>((resolve) => {
    secondAsked = resolve;
  });
  const page = (name: string, token?: string) => nodePage(resourceVersion, name, token);
  const collection = await watchCollection<KubernetesObject>({
    ...NODES_IN_PAGES_OF_ONE,
    kc,
    list: async ({ continue: token, onContinue }) => {
      asked.push(token);
      if (token === undefined) {
        onContinue?.('page-2');
        // The first page ends only once the second has been asked for: a client that waits for
        // the end of a page before asking for the next never gets here.
        await Promise.race([second, sleep(2000).then(() => Promise.reject(new Error('the second page was not asked for before the first ended')))]);
        return page('master-0', 'page-2');
      }
      secondAsked();
      return page('master-1');
    },
    project: (obj) => nodeProjection(obj as V1Node),
    log: quiet,
    onChange: () => undefined,
  });
  try {
    assert.equal(asked, [undefined, 'page-2']);
    assert.equal(names(collection.items()), ['master-0', 'master-1']);
  } finally {
    await collection.stop();
    await cluster.close();
  }
});

test('a list in pages asks for one page ahead, no more: at most two requests at once', async () => {
  const cluster = await startCluster({ nodes: {} });
  const { kc, resourceVersion } = await pagedNodesOf(cluster);
  let inFlight = 0;
  let most = 0;
  const collection = await watchCollection<KubernetesObject>({
    ...NODES_IN_PAGES_OF_ONE,
    kc,
    list: async ({ continue: token, onContinue }) => {
      const n = token === undefined ? 0 : Number(token);
      most = Math.max(most, ++inFlight);
      // Each page's token comes at once, its items 50 ms later, as from a server under load.
      if (n < 5) onContinue?.(String(n + 1));
      await sleep(50);
      inFlight -= 1;
      return nodePage(resourceVersion, `node-${n}`, n < 5 ? String(n + 1) : undefined);
    },
    project: (obj) => nodeProjection(obj as V1Node),
    log: quiet,
    onChange: () => undefined,
  });
  try {
    assert.is(collection.items().length, 6);
    assert.is(most, 2);
  } finally {
    await collection.stop();
    await cluster.close();
  }
});

test.run();
