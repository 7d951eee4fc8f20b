import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as k8s from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  requestAttributes,
  rulesAllow,
  startKubeApiServer,
  type KubeApiServer,
  type KubeApiServerOptions,
  type KubeObject,
  type KubeStatus,
} from './support/kube-api-server.js';

const NS = 'openshift-ingress';
const INFRA = { group: 'config.openshift.io', version: 'v1', plural: 'infrastructures', name: 'cluster' } as const;
const INFRA_REF = { resource: 'infrastructures.config.openshift.io', name: 'cluster' } as const;
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

interface Clients {
  server: KubeApiServer;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
}

async function withServer(options: KubeApiServerOptions, body: (c: Clients) => Promise<void>): Promise<void> {
  const server = await startKubeApiServer(options);
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(server.kubeconfig());
    await body({ server, kc, core: kc.makeApiClient(k8s.CoreV1Api), custom: kc.makeApiClient(k8s.CustomObjectsApi) });
  } finally {
    await server.close();
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The HTTP status and Status body of a call client-node rejected. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; status: KubeStatus }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      return { code: err.code, status: JSON.parse(String(err.body)) as KubeStatus };
    }
    throw err;
  }
  throw new Error('expected the call to be refused');
}

function service(name: string, namespace = NS, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec: { type: 'LoadBalancer', ports: [{ port: 443 }] },
  };
}

function infrastructure(status: Record<string, unknown> = { platform: 'AWS' }): KubeObject {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type: 'AWS' } },
    status,
  };
}

interface SeenEvent {
  type: string;
  name: string | undefined;
  resourceVersion: string | undefined;
  object: KubeObject;
}

/** A k8s.Watch on `path` that records its events and how it ended. */
async function recordWatch(kc: k8s.KubeConfig, path: string, query: Record<string, string | number | boolean | undefined>) {
  const events: SeenEvent[] = [];
  const state: { ended: boolean; error: unknown } = { ended: false, error: undefined };
  const controller = await new k8s.Watch(kc).watch(
    path,
    query,
    (type: string, object: KubeObject) => {
      events.push({ type, name: object.metadata?.name, resourceVersion: object.metadata?.resourceVersion, object });
    },
    (err: unknown) => {
      state.ended = true;
      state.error = err;
    },
  );
  return { events, state, stop: () => controller.abort() };
}

test('requestAttributes derives RBAC verbs, subresources and names the way kube-apiserver does', () => {
  const attrs = (method: string, url: string) => {
    const a = requestAttributes(method, url);
    return a.resourceRequest ? [a.verb, a.apiGroup, a.resource, a.subresource, a.namespace, a.name] : [a.verb, a.path];
  };
  assert.equal(attrs('GET', `/api/v1/namespaces/${NS}/services`), ['list', '', 'services', '', NS, '']);
  assert.equal(attrs('GET', '/api/v1/services?watch=true'), ['watch', '', 'services', '', '', '']);
  assert.equal(attrs('GET', '/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dm0'), ['watch', '', 'nodes', '', '', 'm0']);
  assert.equal(attrs('GET', '/api/v1/watch/namespaces/a/services/s'), ['watch', '', 'services', '', 'a', 's']);
  assert.equal(attrs('PATCH', '/apis/config.openshift.io/v1/infrastructures/cluster/status'), [
    'patch',
    'config.openshift.io',
    'infrastructures',
    'status',
    '',
    'cluster',
  ]);
  assert.equal(attrs('POST', '/api/v1/namespaces/a/configmaps'), ['create', '', 'configmaps', '', 'a', '']);
  assert.equal(attrs('DELETE', '/api/v1/namespaces/a/configmaps'), ['deletecollection', '', 'configmaps', '', 'a', '']);
  assert.equal(attrs('PUT', '/api/v1/namespaces/a'), ['update', '', 'namespaces', '', 'a', 'a']);
  assert.equal(attrs('GET', '/apis'), ['get', '/apis']);
});

test('rulesAllow matches verbs, groups, subresources and resourceNames like RBAC', () => {
  const rules = [
    { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['services'] },
    { verbs: ['patch'], apiGroups: ['config.openshift.io'], resources: ['infrastructures/status'], resourceNames: ['cluster'] },
  ];
  const allows = (method: string, url: string) => rulesAllow(rules, requestAttributes(method, url));
  assert.ok(allows('GET', '/api/v1/services?watch=true'));
  assert.ok(allows('PATCH', '/apis/config.openshift.io/v1/infrastructures/cluster/status'));
  assert.not.ok(allows('PATCH', '/apis/config.openshift.io/v1/infrastructures/cluster'));
  assert.not.ok(allows('PATCH', '/apis/config.openshift.io/v1/infrastructures/other/status'));
  assert.not.ok(allows('GET', '/api/v1/services/x/status'));
  assert.not.ok(allows('DELETE', '/api/v1/namespaces/a/services/x'));
});

test('a list answers the namespace items, each with apiVersion and kind, and the current resourceVersion', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create(service('router-default'));
    server.create(service('router-internal'));
    server.create(service('elsewhere', 'other'));
    const list = await core.listNamespacedService({ namespace: NS });
    assert.equal(
      list.items.map((s) => s.metadata?.name),
      ['router-default', 'router-internal'],
    );
    assert.equal(list.items[0]?.apiVersion, 'v1');
    assert.equal(list.items[0]?.kind, 'Service');
    assert.equal(list.metadata?.resourceVersion, server.resourceVersion);
    const all = await core.listServiceForAllNamespaces();
    assert.is(all.items.length, 3);
  });
});

test('label and field selectors filter a list', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create(service('a', NS, { app: 'router', tier: 'edge' }));
    server.create(service('b', NS, { app: 'router' }));
    server.create(service('c', NS, { app: 'other' }));
    const names = async (q: { labelSelector?: string; fieldSelector?: string }) =>
      (await core.listNamespacedService({ namespace: NS, ...q })).items.map((s) => s.metadata?.name);
    assert.equal(await names({ labelSelector: 'app=router' }), ['a', 'b']);
    assert.equal(await names({ labelSelector: 'app=router,tier' }), ['a']);
    assert.equal(await names({ labelSelector: 'app!=router' }), ['c']);
    assert.equal(await names({ labelSelector: 'app in (other,none)' }), ['c']);
    assert.equal(await names({ fieldSelector: 'metadata.name=b' }), ['b']);
  });
});

test('limit and continue page through a list', async () => {
  await withServer({}, async ({ server, core }) => {
    for (const name of ['a', 'b', 'c']) server.create(service(name));
    const first = await core.listNamespacedService({ namespace: NS, limit: 2 });
    assert.equal(first.items.map((s) => s.metadata?.name), ['a', 'b']);
    assert.is(first.metadata?.remainingItemCount, 1);
    const rest = await core.listNamespacedService({ namespace: NS, limit: 2, _continue: first.metadata?._continue });
    assert.equal(rest.items.map((s) => s.metadata?.name), ['c']);
    assert.is(rest.metadata?._continue, undefined);
  });
});

test('with a list cost, each list answers no sooner than the cost of its request and its size', async () => {
  await withServer({ listCost: { perRequestMs: 150, perMegabyteMs: 1000 } }, async ({ server, core }) => {
    server.create({ ...service('big'), metadata: { name: 'big', namespace: NS, annotations: { pad: 'x'.repeat(200_000) } } });
    const started = performance.now();
    await core.listNamespacedService({ namespace: NS });
    // 150 ms + 0.2 MB at 1,000 ms per MB
    assert.ok(performance.now() - started >= 340, `answered after ${performance.now() - started} ms`);
  });
});

test('without a list cost, a list answers at once', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create(service('a'));
    const started = performance.now();
    await core.listNamespacedService({ namespace: NS });
    assert.ok(performance.now() - started < 150, `answered after ${performance.now() - started} ms`);
  });
});

test('getting a missing object is refused with a 404 NotFound Status', async () => {
  await withServer({}, async ({ core, custom }) => {
    const svc = await refusal(core.readNamespacedService({ name: 'x', namespace: NS }));
    assert.is(svc.code, 404);
    assert.equal(svc.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'services "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'services' },
      code: 404,
    });
    const infra = await refusal(custom.getClusterCustomObject(INFRA));
    assert.is(infra.status.message, 'infrastructures.config.openshift.io "cluster" not found');
    assert.equal(infra.status.details, { name: 'cluster', group: 'config.openshift.io', kind: 'infrastructures' });
  });
});

test('creating an object that exists is refused with 409 AlreadyExists', async () => {
  await withServer({}, async ({ core }) => {
    const body = { metadata: { name: 'dns' }, data: { a: '1' } };
    const created = await core.createNamespacedConfigMap({ namespace: NS, body });
    assert.ok(created.metadata?.uid);
    assert.is(created.metadata?.namespace, NS);
    const again = await refusal(core.createNamespacedConfigMap({ namespace: NS, body }));
    assert.is(again.code, 409);
    assert.is(again.status.reason, 'AlreadyExists');
    assert.is(again.status.message, 'configmaps "dns" already exists');
  });
});

test('a watch from a list resourceVersion sees ADDED, MODIFIED and DELETED in order', async () => {
  await withServer({}, async ({ server, kc, core }) => {
    server.create(service('before'));
    const list = await core.listNamespacedService({ namespace: NS });
    const watch = await recordWatch(kc, `/api/v1/namespaces/${NS}/services`, { resourceVersion: list.metadata?.resourceVersion });
    try {
      server.create(service('lb'));
      server.patchStatus({ resource: 'services', namespace: NS, name: 'lb' }, { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } });
      const deleted = server.delete({ resource: 'services', namespace: NS, name: 'lb' });
      await until(() => watch.events.length === 3, 'three events');
      assert.equal(
        watch.events.map((e) => [e.type, e.name]),
        [
          ['ADDED', 'lb'],
          ['MODIFIED', 'lb'],
          ['DELETED', 'lb'],
        ],
      );
      assert.is(watch.events[2]?.resourceVersion, deleted.metadata.resourceVersion);
      assert.is(deleted.metadata.resourceVersion, server.resourceVersion);
    } finally {
      watch.stop();
    }
  });
});

test('a watch without a resourceVersion starts with every current object as ADDED', async () => {
  await withServer({}, async ({ server, kc }) => {
    server.create(service('a'));
    server.create(service('b'));
    const watch = await recordWatch(kc, `/api/v1/namespaces/${NS}/services`, {});
    try {
      await until(() => watch.events.length === 2, 'the initial events');
      assert.equal(
        watch.events.map((e) => [e.type, e.name]),
        [
          ['ADDED', 'a'],
          ['ADDED', 'b'],
        ],
      );
    } finally {
      watch.stop();
    }
  });
});

test('a watch from a compacted resourceVersion gets a 410 Expired ERROR event and ends', async () => {
  await withServer({}, async ({ server, kc }) => {
    server.create(service('a'));
    const old = server.resourceVersion;
    server.create(service('b'));
    server.compact();
    const watch = await recordWatch(kc, `/api/v1/namespaces/${NS}/services`, { resourceVersion: old });
    await until(() => watch.state.ended, 'the watch to end');
    assert.is(watch.state.error, null);
    assert.is(watch.events.length, 1);
    const status = watch.events[0]?.object as unknown as KubeStatus;
    assert.is(watch.events[0]?.type, 'ERROR');
    assert.is(status.code, 410);
    assert.is(status.reason, 'Expired');
    assert.is(status.message, `too old resource version: ${old} (${server.resourceVersion})`);
  });
});

test('after a compaction an informer relists and still holds every object', async () => {
  await withServer({}, async ({ server, kc, core }) => {
    server.create(service('a'));
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/services`, () => core.listNamespacedService({ namespace: NS }));
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await until(() => server.watchCount === 1, 'the informer watch');
      server.clearRequests();
      server.compact();
      await until(() => server.requests.some((r) => r.verb === 'list'), 'a relist');
      server.create(service('b'));
      await until(() => informer.list().length === 2, 'both services in the informer');
      assert.equal(errors, []);
    } finally {
      await informer.stop();
    }
  });
});

test('a merge patch of the status subresource changes status and nothing else', async () => {
  await withServer({}, async ({ server, custom }) => {
    const before = server.create(infrastructure());
    const patched = (await custom.patchClusterCustomObjectStatus(
      { ...INFRA, body: { spec: { platformSpec: { type: 'GCP' } }, status: { infrastructureName: 'c-1' } } },
      mergePatch,
    )) as KubeObject;
    assert.equal(patched.spec, { platformSpec: { type: 'AWS' } });
    assert.equal(patched.status, { platform: 'AWS', infrastructureName: 'c-1' });
    assert.is(patched.metadata?.generation, before.metadata.generation);
    assert.is.not(patched.metadata?.resourceVersion, before.metadata.resourceVersion);
  });
});

test('a patch of the main resource leaves status alone and bumps generation for spec changes', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create({ ...service('lb'), status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
    const patched = await core.patchNamespacedService(
      {
        name: 'lb',
        namespace: NS,
        body: { spec: { ports: [{ port: 6443 }] }, status: { loadBalancer: { ingress: [{ ip: '198.51.100.9' }] } } },
      },
      mergePatch,
    );
    assert.equal(patched.status?.loadBalancer?.ingress?.map((i) => i.ip), ['192.0.2.1']);
    assert.is(patched.spec?.ports?.[0]?.port, 6443);
    assert.is(patched.metadata?.generation, 2);
  });
});

test('a replace carrying a stale resourceVersion is refused with 409 Conflict', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS }, data: { a: '1' } });
    const read = await core.readNamespacedConfigMap({ name: 'c', namespace: NS });
    server.mergePatch({ resource: 'configmaps', namespace: NS, name: 'c' }, { data: { a: '2' } });
    const stale = await refusal(core.replaceNamespacedConfigMap({ name: 'c', namespace: NS, body: { ...read, data: { a: '3' } } }));
    assert.is(stale.code, 409);
    assert.is(stale.status.reason, 'Conflict');
    assert.is(
      stale.status.message,
      'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
    );
  });
});

test('a merge patch carrying a stale resourceVersion is refused with 409 Conflict', async () => {
  await withServer({}, async ({ server, custom }) => {
    const before = server.create(infrastructure());
    server.patchStatus(INFRA_REF, { infrastructureName: 'moved-on' });
    const stale = await refusal(
      custom.patchClusterCustomObjectStatus(
        { ...INFRA, body: { metadata: { resourceVersion: before.metadata.resourceVersion }, status: { infrastructureName: 'x' } } },
        mergePatch,
      ),
    );
    assert.is(stale.code, 409);
    assert.is(
      stale.status.message,
      'Operation cannot be fulfilled on infrastructures.config.openshift.io "cluster": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.equal(stale.status.details, { name: 'cluster', group: 'config.openshift.io', kind: 'infrastructures' });
  });
});

test('a JSON patch, client-node default patch type, is applied', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS }, data: { a: '1' } });
    const patched = await core.patchNamespacedConfigMap({
      name: 'c',
      namespace: NS,
      body: [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'replace', path: '/data/a', value: '2' },
        { op: 'add', path: '/data/b', value: '3' },
      ],
    });
    assert.equal(patched.data, { a: '2', b: '3' });
    assert.is(server.requests.at(-1)?.contentType, 'application/json-patch+json');
  });
});

test('a JSON patch whose test operation fails is refused with 422 and changes nothing', async () => {
  await withServer({}, async ({ server, core }) => {
    const before = server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS }, data: { a: '1' } });
    const failed = await refusal(
      core.patchNamespacedConfigMap({
        name: 'c',
        namespace: NS,
        body: [
          { op: 'test', path: '/data/a', value: '0' },
          { op: 'replace', path: '/data/a', value: '2' },
        ],
      }),
    );
    assert.is(failed.code, 422);
    assert.equal(failed.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
    assert.equal(server.get({ resource: 'configmaps', namespace: NS, name: 'c' }), before);
  });
});

test('a strategic merge patch of a custom resource is refused with 415', async () => {
  await withServer({}, async ({ server, custom }) => {
    server.create(infrastructure());
    const refused = await refusal(
      custom.patchClusterCustomObjectStatus(
        { ...INFRA, body: { status: { infrastructureName: 'x' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
      ),
    );
    assert.is(refused.code, 415);
    assert.is(refused.status.reason, 'UnsupportedMediaType');
    assert.is(
      refused.status.message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json',
    );
  });
});

test('a strategic merge patch of a built-in resource is applied', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create(service('lb'));
    const patched = await core.patchNamespacedServiceStatus(
      { name: 'lb', namespace: NS, body: { status: { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    assert.equal(patched.status?.loadBalancer?.ingress?.map((i) => i.hostname), ['lb.example.com']);
  });
});

test('a patch with an unknown content type is refused with 415', async () => {
  await withServer({}, async ({ server, core }) => {
    server.create(service('lb'));
    const refused = await refusal(
      core.patchNamespacedService({ name: 'lb', namespace: NS, body: {} }, k8s.setHeaderOptions('Content-Type', 'text/plain')),
    );
    assert.is(refused.code, 415);
    assert.match(refused.status.message ?? '', /application\/strategic-merge-patch\+json/);
  });
});

test('a request the rules do not allow is refused with 403 worded like kube-apiserver', async () => {
  const rules = [
    { verbs: ['get', 'list', 'watch'], apiGroups: ['config.openshift.io'], resources: ['infrastructures'] },
    { verbs: ['update'], apiGroups: ['config.openshift.io'], resources: ['infrastructures/status'] },
    { verbs: ['list'], apiGroups: [''], resources: ['services'] },
  ];
  await withServer({ rules, user: 'system:serviceaccount:lbdns:writer' }, async ({ server, core, custom }) => {
    server.create(infrastructure());
    await custom.getClusterCustomObject(INFRA);
    const patch = await refusal(custom.patchClusterCustomObjectStatus({ ...INFRA, body: { status: {} } }, mergePatch));
    assert.is(patch.code, 403);
    assert.is(patch.status.reason, 'Forbidden');
    assert.is(
      patch.status.message,
      'infrastructures.config.openshift.io "cluster" is forbidden: User "system:serviceaccount:lbdns:writer" cannot patch resource "infrastructures/status" in API group "config.openshift.io" at the cluster scope',
    );
    assert.equal(patch.status.details, { name: 'cluster', group: 'config.openshift.io', kind: 'infrastructures' });
    const read = await refusal(core.readNamespacedService({ name: 'x', namespace: 'ns1' }));
    assert.is(
      read.status.message,
      'services "x" is forbidden: User "system:serviceaccount:lbdns:writer" cannot get resource "services" in API group "" in the namespace "ns1"',
    );
    const list = await refusal(core.listNamespacedConfigMap({ namespace: 'ns1' }));
    assert.is(
      list.status.message,
      'configmaps is forbidden: User "system:serviceaccount:lbdns:writer" cannot list resource "configmaps" in API group "" in the namespace "ns1"',
    );
  });
});

test('with a token required, requests without it get 401 and the written kubeconfig carries it', async () => {
  await withServer({ token: 'test-token' }, async ({ server }) => {
    const anonymous = await fetch(`${server.url}/api/v1/namespaces/${NS}/services`);
    assert.is(anonymous.status, 401);
    assert.is(((await anonymous.json()) as KubeStatus).reason, 'Unauthorized');
    const dir = await mkdtemp(join(tmpdir(), 'kube-api-server-'));
    try {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(await server.writeKubeconfig(dir));
      const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedService({ namespace: NS });
      assert.equal(list.items, []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('after stop() and start() on the same port an informer resumes and sees what changed meanwhile', async () => {
  await withServer({}, async ({ server, kc, core }) => {
    server.create(service('a'));
    const url = server.url;
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/services`, () => core.listNamespacedService({ namespace: NS }));
    let running = true;
    // Informers stop on any error but 410; restarting them is the caller's job.
    informer.on('error', () => {
      setTimeout(() => {
        if (running) void informer.start();
      }, 20);
    });
    await informer.start();
    try {
      await until(() => server.watchCount === 1, 'the informer watch');
      await server.stop();
      const during = await core.listNamespacedService({ namespace: NS }).then(
        () => 'served',
        (err: unknown) => String(err),
      );
      assert.match(during, /ECONNREFUSED/);
      server.create(service('b'));
      server.delete({ resource: 'services', namespace: NS, name: 'a' });
      await server.start();
      assert.is(server.url, url);
      await until(
        () => informer.list().map((s) => s.metadata?.name).join() === 'b',
        'the informer to see the outage changes',
      );
    } finally {
      running = false;
      await informer.stop();
    }
  });
});

test('closeWatches ends the streams and an informer watches again from where it was, without relisting', async () => {
  await withServer({}, async ({ server, kc, core }) => {
    server.create(service('a'));
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/services`, () => core.listNamespacedService({ namespace: NS }));
    await informer.start();
    try {
      await until(() => server.watchCount === 1, 'the informer watch');
      server.clearRequests();
      server.closeWatches();
      server.create(service('b'));
      await until(() => informer.list().length === 2, 'the second service');
      assert.equal(
        server.requests.map((r) => r.verb),
        ['watch'],
      );
    } finally {
      await informer.stop();
    }
  });
});

test('the request log records each call with its verb, resource and subresource', async () => {
  await withServer({}, async ({ server, kc, custom }) => {
    server.create(infrastructure());
    await custom.listClusterCustomObject({ group: INFRA.group, version: INFRA.version, plural: INFRA.plural });
    await custom.getClusterCustomObject(INFRA);
    await custom.patchClusterCustomObjectStatus({ ...INFRA, body: { status: { infrastructureName: 'x' } } }, mergePatch);
    const watch = await recordWatch(kc, '/apis/config.openshift.io/v1/infrastructures', { resourceVersion: server.resourceVersion });
    watch.stop();
    const seen = server.requests.map((r) =>
      r.attributes.resourceRequest ? [r.method, r.verb, r.attributes.resource, r.attributes.subresource, r.watch, r.status] : [],
    );
    assert.equal(seen, [
      ['GET', 'list', 'infrastructures', '', false, 200],
      ['GET', 'get', 'infrastructures', '', false, 200],
      ['PATCH', 'patch', 'infrastructures', 'status', false, 200],
      ['GET', 'watch', 'infrastructures', '', true, 200],
    ]);
    assert.is(server.requests[2]?.contentType, 'application/merge-patch+json');
  });
});

test('failNext answers the next matching requests with the injected status, then serves normally', async () => {
  await withServer({}, async ({ server, custom }) => {
    server.create(infrastructure());
    server.failNext({ method: 'PATCH', pathIncludes: '/status' }, 500);
    const call = () => custom.patchClusterCustomObjectStatus({ ...INFRA, body: { status: { infrastructureName: 'x' } } }, mergePatch);
    const failed = await refusal(call());
    assert.is(failed.code, 500);
    assert.is(failed.status.reason, 'InternalError');
    await call();
    assert.equal(
      server.requests.map((r) => r.status),
      [500, 200],
    );
  });
});

test('a write made by a beforeWrite hook makes a patch guarded by the read resourceVersion conflict', async () => {
  await withServer({}, async ({ server, custom }) => {
    server.create(infrastructure());
    const read = (await custom.getClusterCustomObject(INFRA)) as KubeObject;
    const seen: string[] = [];
    server.beforeWrite(({ attributes }) => {
      seen.push(`${attributes.verb} ${attributes.resource}/${attributes.subresource}`);
      server.patchStatus(INFRA_REF, { infrastructureName: 'concurrent' });
      server.beforeWrite(undefined);
    });
    const guarded = await refusal(
      custom.patchClusterCustomObjectStatus(
        { ...INFRA, body: { metadata: { resourceVersion: read.metadata?.resourceVersion }, status: { infrastructureName: 'mine' } } },
        mergePatch,
      ),
    );
    assert.is(guarded.code, 409);
    assert.equal(seen, ['patch infrastructures/status']);
    assert.is((server.get(INFRA_REF)?.status as { infrastructureName?: string }).infrastructureName, 'concurrent');
  });
});

test('an update that changes nothing keeps the resourceVersion and sends no event', async () => {
  await withServer({}, async ({ server, kc, custom }) => {
    const before = server.create(infrastructure());
    const watch = await recordWatch(kc, '/apis/config.openshift.io/v1/infrastructures', { resourceVersion: server.resourceVersion });
    try {
      const same = (await custom.patchClusterCustomObjectStatus({ ...INFRA, body: { status: { platform: 'AWS' } } }, mergePatch)) as KubeObject;
      assert.is(same.metadata?.resourceVersion, before.metadata.resourceVersion);
      server.patchStatus(INFRA_REF, { platform: 'GCP' });
      await until(() => watch.events.length > 0, 'an event');
      assert.equal(
        watch.events.map((e) => [e.type, (e.object.status as { platform: string }).platform]),
        [['MODIFIED', 'GCP']],
      );
    } finally {
      watch.stop();
    }
  });
});

test('timeoutSeconds ends a watch cleanly', async () => {
  await withServer({}, async ({ server, kc }) => {
    const started = Date.now();
    const watch = await recordWatch(kc, '/api/v1/nodes', { resourceVersion: server.resourceVersion, timeoutSeconds: 1 });
    await until(() => watch.state.ended, 'the watch to time out', 3000);
    assert.is(watch.state.error, null);
    assert.ok(Date.now() - started >= 900);
    assert.is(server.watchCount, 0);
  });
});

test('a watch with a label selector sees an object leave its selection as DELETED', async () => {
  await withServer({}, async ({ server, kc }) => {
    server.create(service('lb', NS, { app: 'router' }));
    const watch = await recordWatch(kc, `/api/v1/namespaces/${NS}/services`, { labelSelector: 'app=router' });
    try {
      await until(() => watch.events.length === 1, 'the initial event');
      server.mergePatch({ resource: 'services', namespace: NS, name: 'lb' }, { metadata: { labels: { app: 'other' } } });
      await until(() => watch.events.length === 2, 'the selection change');
      assert.equal(
        watch.events.map((e) => [e.type, e.name]),
        [
          ['ADDED', 'lb'],
          ['DELETED', 'lb'],
        ],
      );
    } finally {
      watch.stop();
    }
  });
});

test('delete answers a Service with the object and a custom resource with a Success Status', async () => {
  await withServer({}, async ({ server, core, custom }) => {
    server.create(service('lb'));
    server.create(infrastructure());
    const svc = await core.deleteNamespacedService({ name: 'lb', namespace: NS });
    assert.is(svc.metadata?.name, 'lb');
    const status = (await custom.deleteClusterCustomObject(INFRA)) as KubeStatus;
    assert.is(status.status, 'Success');
    assert.equal(server.list('infrastructures'), []);
  });
});

test('a replace of a custom resource without a resourceVersion is refused with 422', async () => {
  await withServer({}, async ({ server, custom }) => {
    server.create(infrastructure());
    const body = { ...infrastructure(), spec: { platformSpec: { type: 'GCP' } } };
    const refused = await refusal(custom.replaceClusterCustomObject({ ...INFRA, body }));
    assert.is(refused.code, 422);
    assert.is(
      refused.status.message,
      'infrastructures.config.openshift.io "cluster" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });
});

test('an answer over 128 KiB is gzipped for a client that accepts gzip, as kube-apiserver does', async () => {
  await withServer({}, async ({ server }) => {
    for (let i = 0; i < 400; i++) {
      server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i}`, namespace: NS }, data: { filler: 'x'.repeat(400) } });
    }
    const { get } = await import('node:http');
    const head = (path: string, headers: Record<string, string>) =>
      new Promise<{ encoding: string | undefined; bytes: number }>((resolve, reject) => {
        get(`${server.url}${path}`, { headers }, (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], bytes }));
        }).on('error', reject);
      });
    const big = `/api/v1/namespaces/${NS}/configmaps`;
    const gzipped = await head(big, { 'Accept-Encoding': 'gzip' });
    assert.is(gzipped.encoding, 'gzip');
    const plain = await head(big, {});
    assert.is(plain.encoding, undefined);
    assert.is((await head(big, { 'Accept-Encoding': 'br, gzip;q=0' })).encoding, undefined, 'gzip refused with q=0');
    assert.ok(plain.bytes > 128 * 1024 && gzipped.bytes < plain.bytes / 4, `${gzipped.bytes} gzipped against ${plain.bytes}`);
    assert.is((await head(`${big}/c-0`, { 'Accept-Encoding': 'gzip' })).encoding, undefined, 'a small answer goes uncompressed');
  });
});

test('discovery lists the served API groups, versions and resources', async () => {
  await withServer({}, async ({ server, kc }) => {
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    assert.is(version.gitVersion, 'v1.32.0');
    const groups = await kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    assert.equal(
      groups.groups.map((g) => g.name),
      ['config.openshift.io', 'ingress.operator.openshift.io'],
    );
    const core = await kc.makeApiClient(k8s.CoreApi).getAPIVersions();
    assert.equal(core.versions, ['v1']);
    const resources = (await (await fetch(`${server.url}/apis/config.openshift.io/v1`)).json()) as { resources: { name: string }[] };
    assert.equal(
      resources.resources.map((r) => r.name),
      ['infrastructures', 'infrastructures/status', 'dnses', 'dnses/status'],
    );
  });
});

test.run();
