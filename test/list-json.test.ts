import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { KubeAccessError } from '../lib/errors.js';
import { kubeErrorFrom } from '../lib/kube/api-error.js';
import { listJson } from '../lib/kube/list-json.js';
import { startCluster } from './support/cluster-fixture.js';

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly gzip?: boolean;
}

/** A one-route API server on loopback that answers every GET with `answer` and keeps what it was asked. */
/** A kubeconfig for a plain-HTTP test server listening on 127.0.0.1. */
function kubeconfigFor(server: Server, user: { name: string; token?: string } = { name: 'u' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: user.name }],
    currentContext: 'x',
  });
  return kc;
}

async function withServer(answer: Answer, body: (kc: KubeConfig, asked: () => { url: string; headers: IncomingHttpHeaders }) => Promise<void>): Promise<void> {
  let last = { url: '', headers: {} as IncomingHttpHeaders };
  const server: Server = createServer((req, res) => {
    last = { url: req.url ?? '', headers: req.headers };
    const text = JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(answer.gzip ? gzipSync(text) : text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = kubeconfigFor(server, { name: 'u', token: 'secret-token' });
  try {
    await body(kc, () => last);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const NODE_LIST = { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'master-0' } }] };

test('a list comes back as the plain JSON the server sent', async () => {
  await withServer({ status: 200, body: NODE_LIST }, async (kc) => {
    assert.equal(await listJson(kc, '/api/v1/nodes', {}), NODE_LIST);
  });
});

test('a gzip-compressed answer is decompressed, and gzip is asked for', async () => {
  await withServer({ status: 200, body: NODE_LIST, gzip: true }, async (kc, asked) => {
    assert.equal(await listJson(kc, '/api/v1/nodes', {}), NODE_LIST);
    assert.match(String(asked().headers['accept-encoding']), /gzip/);
  });
});

test('with a selection, only the parts it names are built from the answer', async () => {
  const body = { ...NODE_LIST, items: [{ metadata: { name: 'master-0', labels: { a: 'b' } }, status: { images: [{ names: ['x'] }], addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } }] };
  await withServer({ status: 200, body, gzip: true }, async (kc) => {
    const list = await listJson(kc, '/api/v1/nodes', {}, { metadata: { resourceVersion: true }, items: { '*': { metadata: { name: true }, status: { addresses: true } } } });
    assert.equal(list, { metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'master-0' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } }] });
  });
});

test('the next page token is handed over as soon as it arrives, before the page items', async () => {
  let tokenSeen: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => {
    tokenSeen = resolve;
  });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"page-2"},"items":[');
    // The items come only once the client has the token: without it, this list never ends.
    void seen.then(() => res.end('{"metadata":{"name":"master-0"}}]}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = kubeconfigFor(server);
  try {
    const tokens: string[] = [];
    const list = await listJson(kc, '/api/v1/nodes', { limit: 1 }, true, (token) => {
      tokens.push(token);
      tokenSeen();
    });
    assert.equal(tokens, ['page-2']);
    assert.equal(list.items, [{ metadata: { name: 'master-0' } }]);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('the request carries the kubeconfig credentials and the query', async () => {
  await withServer({ status: 200, body: NODE_LIST }, async (kc, asked) => {
    await listJson(kc, '/api/v1/nodes', { limit: 500, continue: 'abc', fieldSelector: 'metadata.name=x' });
    const url = new URL(asked().url, 'http://host');
    assert.is(url.pathname, '/api/v1/nodes');
    assert.is(url.searchParams.get('limit'), '500');
    assert.is(url.searchParams.get('continue'), 'abc');
    assert.is(url.searchParams.get('fieldSelector'), 'metadata.name=x');
    assert.is(asked().headers.authorization, 'Bearer secret-token');
  });
});

test('a refusal becomes the same typed error as a refusal through client-node', async () => {
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'nodes is forbidden: User "x" cannot list resource "nodes"', reason: 'Forbidden', code: 403 };
  await withServer({ status: 403, body: status }, async (kc) => {
    const err = await listJson(kc, '/api/v1/nodes', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    const typed = kubeErrorFrom(err, 'list nodes');
    assert.instance(typed, KubeAccessError);
    assert.match(typed.message, /^list nodes: forbidden \(nodes is forbidden: User "x" cannot list resource "nodes"\)/);
  });
});

test('pages of the API server come back with the token to the next one', async () => {
  const cluster = await startCluster({ nodes: { 'master-0': ['10.0.0.5'], 'master-1': ['10.0.0.6'], 'master-2': ['10.0.0.7'] } });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    const first = await listJson(kc, '/api/v1/nodes', { limit: 2 });
    assert.equal(first.items.map((n) => n.metadata?.name), ['master-0', 'master-1']);
    const token = (first.metadata as { continue?: string }).continue;
    assert.type(token, 'string');
    const second = await listJson(kc, '/api/v1/nodes', { limit: 2, continue: token });
    assert.equal(second.items.map((n) => n.metadata?.name), ['master-2']);
  } finally {
    await cluster.close();
  }
});

test('a list whose server stops sending fails after the idle timeout instead of waiting for ever', async () => {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"kind":"NodeList","items":[');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = kubeconfigFor(server);
  try {
    const started = Date.now();
    const err = await listJson(kc, '/api/v1/nodes', {}, true, undefined, 200).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.match(err?.message ?? '', 'GET /api/v1/nodes: nothing received for 0.2 s');
    assert.ok(Date.now() - started < 2000);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test.run();
