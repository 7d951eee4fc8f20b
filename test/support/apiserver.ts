/**
 * The real kube-apiserver with etcd (`make peers`, test/peers/kube-apiserver) on loopback, with
 * the CRDs lbdns reads and writes installed unchanged, and an admin client for tests to seed and
 * change objects through the API as a cluster's own controllers would.
 *
 * One server is shared by the tests of a process (it takes seconds to start) and made empty
 * again for each cluster a test asks for (`sharedApiServer().reset`); a test that stops the API
 * (an outage) starts its own.
 */
import { request } from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { peerBinary, startPeer, waitForOutput, type PeerProcess } from './peers.js';

import type { KubeObject, PolicyRule, StoredObject } from './kube-api-server.js';

export type { KubeObject, StoredObject };

/** A failed request: the HTTP status and the API's Status body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message?: string; reason?: string; details?: { causes?: { field?: string; message?: string }[] } },
  ) {
    super(`${status} ${body.reason ?? ''}: ${body.message ?? JSON.stringify(body)}`);
  }
}

const FIXTURE_CRDS = fileURLToPath(new URL('../fixtures/crds/', import.meta.url));
const MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url));

export const INFRASTRUCTURE_CRDS = {
  'release-4.19': `${FIXTURE_CRDS}0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.crd.yaml`,
  main: `${FIXTURE_CRDS}0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.main.crd.yaml`,
} as const;
export type InfrastructureCrd = keyof typeof INFRASTRUCTURE_CRDS;
export const HOSTED_NET_SERVICES_CRD = `${MANIFESTS}crd-hostednetservices.yaml`;

/** The CRDs every server has besides the Infrastructure one: OpenShift's, Gateway API's and Kuadrant's. */
const BASE_CRDS = [
  `${FIXTURE_CRDS}0000_10_config-operator_01_dnses.crd.yaml`,
  `${FIXTURE_CRDS}0000_50_dns_01_dnsrecords.crd.yaml`,
  `${FIXTURE_CRDS}0000_80_machine-config_01_machineconfigs.crd.yaml`,
  `${FIXTURE_CRDS}gateway.networking.k8s.io_gateways.yaml`,
  `${FIXTURE_CRDS}gateway.networking.k8s.io_httproutes.yaml`,
  `${FIXTURE_CRDS}kuadrant.io_dnspolicies.yaml`,
  `${FIXTURE_CRDS}kuadrant.io_dnsrecords.yaml`,
];

/** The identity lbdns runs as in tests that grant it only some rights (static token, no group). */
const LBDNS_USER = 'lbdns-test';
/** The identity lbdns runs as otherwise: a cluster admin, apart from the one the tests themselves use. */
const LBDNS_ADMIN = 'lbdns-test-as-admin';

/** A resource as tests name it: the plural, with its group where the plural alone is ambiguous. */
interface ResourceInfo {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Written through the status subresource. */
  readonly status: boolean;
}

const RESOURCES: readonly ResourceInfo[] = [
  { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, status: false },
  { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, status: true },
  { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true, status: true },
  { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, status: false },
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, status: false },
  { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, status: true },
  { apiVersion: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, status: false },
  { apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true, status: false },
  { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', plural: 'infrastructures', namespaced: false, status: true },
  { apiVersion: 'config.openshift.io/v1', kind: 'DNS', plural: 'dnses', namespaced: false, status: true },
  { apiVersion: 'ingress.operator.openshift.io/v1', kind: 'DNSRecord', plural: 'dnsrecords', namespaced: true, status: true },
  { apiVersion: 'kuadrant.io/v1alpha1', kind: 'DNSRecord', plural: 'dnsrecords.kuadrant.io', namespaced: true, status: true },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true, status: true },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true, status: true },
  { apiVersion: 'kuadrant.io/v1', kind: 'DNSPolicy', plural: 'dnspolicies', namespaced: true, status: true },
  { apiVersion: 'lbdns.io/v1alpha1', kind: 'HostedNetServices', plural: 'hostednetservices', namespaced: false, status: true },
  { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', plural: 'machineconfigs', namespaced: false, status: false },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, status: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false, status: false },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false, status: false },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true, status: false },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true, status: false },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', plural: 'daemonsets', namespaced: true, status: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true, status: true },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', plural: 'servicemonitors', namespaced: true, status: false },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', plural: 'prometheusrules', namespaced: true, status: false },
];

function infoOfObject(obj: KubeObject): ResourceInfo {
  const found = RESOURCES.find((r) => r.kind === obj.kind && r.apiVersion === obj.apiVersion);
  if (found === undefined) throw new Error(`apiserver.ts: kind ${obj.apiVersion} ${obj.kind} is not in RESOURCES`);
  return found;
}

function infoOfResource(resource: string): ResourceInfo {
  const found = RESOURCES.find((r) => r.plural === resource || `${r.plural}.${r.apiVersion.split('/')[0]}` === resource);
  if (found === undefined) throw new Error(`apiserver.ts: resource ${resource} is not in RESOURCES`);
  return found;
}

const plural = (info: ResourceInfo): string => info.plural.split('.')[0] as string;

function collectionPath(info: ResourceInfo, namespace: string | undefined): string {
  const base = info.apiVersion.includes('/') ? `/apis/${info.apiVersion}` : `/api/${info.apiVersion}`;
  return `${base}${info.namespaced && namespace !== undefined ? `/namespaces/${namespace}` : ''}/${plural(info)}`;
}

/** An object as tests name it: `{ resource: 'services', namespace, name }`. */
export interface ObjectRef {
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
}

/** What the audit log says one request was: who asked what, and the answer's status. */
export interface AuditedRequest {
  readonly user: string;
  readonly verb: string;
  readonly uri: string;
  readonly resource: string | undefined;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly apiGroup: string | undefined;
  readonly status: number;
}

/**
 * The identities lbdns's manifests run as, each with a static token: the kubelets of a
 * control-plane node and of the bootstrap node (group system:nodes), and update-infra-status's
 * ServiceAccount (RBAC matches a ServiceAccount subject by this user name).
 */
export const IDENTITIES: Readonly<Record<string, readonly string[]>> = {
  'system:node:master-0': ['system:nodes'],
  'system:node:bootstrap': ['system:nodes'],
  'system:serviceaccount:openshift-lbdns:lbdns': ['system:serviceaccounts', 'system:serviceaccounts:openshift-lbdns'],
};

/** A rule of a Role (with its namespace) or a ClusterRole, as RBAC reads it. */
export type RbacRule = PolicyRule;

export interface ApiServer {
  readonly url: string;
  /** The CA that signed the serving certificate (PEM). */
  readonly ca: string;
  /** The admin's bearer token. */
  readonly adminToken: string;
  /** A cluster admin's kubeconfig (system:masters) for lbdns to use. */
  readonly kubeconfig: string;
  /** The kubeconfig of LBDNS_USER, who holds only what grant() gave. */
  readonly userKubeconfig: string;
  /** The kubeconfig of one of IDENTITIES. */
  kubeconfigOf(user: string): string;
  /** The admin's REST call; a path is `/api/v1/…` or `/apis/GROUP/VERSION/…`. */
  call<T = StoredObject>(method: string, path: string, body?: unknown, contentType?: string): Promise<T>;
  /** create, then the status through its subresource (a create drops it), as a controller writes both. */
  create<T = StoredObject>(obj: KubeObject): Promise<T>;
  /** undefined when there is none. */
  get<T = StoredObject>(ref: ObjectRef): Promise<T | undefined>;
  list<T = StoredObject>(resource: string, namespace?: string): Promise<T[]>;
  /** Replaces the whole object, status included. */
  update<T = StoredObject>(obj: KubeObject): Promise<T>;
  /** An RFC 7386 merge patch of the whole object: its status through the subresource. */
  mergePatch<T = StoredObject>(ref: ObjectRef, patch: Record<string, unknown>): Promise<T>;
  patchStatus<T = StoredObject>(ref: ObjectRef, status: unknown): Promise<T>;
  delete(ref: ObjectRef): Promise<void>;
  /** Creates the namespace unless it exists (namespaces outlive a reset). */
  ensureNamespace(namespace: string): Promise<void>;
  /** Grants LBDNS_USER these rules (until the next reset). */
  grant(rules: readonly RbacRule[]): Promise<void>;
  /**
   * What the server makes of `obj` applied (server-side apply, strict field validation), without
   * storing it: schema, defaults, admission and CEL rules, as `kubectl apply --dry-run=server`.
   */
  dryRunApply<T = StoredObject>(obj: KubeObject): Promise<T>;
  /** Creates these Roles, ClusterRoles and their bindings as written (until the next reset). */
  applyRbac(objects: readonly KubeObject[]): Promise<void>;
  /** Requests the audit log recorded since the last clearRequests(): one user's, or lbdns's as either identity. */
  requests(user?: string): Promise<AuditedRequest[]>;
  clearRequests(): Promise<void>;
  /** Empties the cluster of what tests made, and sets up the CRDs a test wants. */
  reset(opts?: ResetOptions): Promise<void>;
  /** Installs the HostedNetServices CRD now, as an admin would after lbdns started (until the next reset). */
  installHostedNetServices(): Promise<void>;
  /** Removes the HostedNetServices CRD now, and its objects with it. */
  removeHostedNetServices(): Promise<void>;
  /** Stops the server (the API goes away); start() brings the same cluster back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** What the server printed. */
  output(): string;
  close(): Promise<void>;
}

export interface ResetOptions {
  /** Which Infrastructure CRD is installed; default release-4.19. */
  readonly infrastructureCrd?: InfrastructureCrd;
  /** Install lbdns's HostedNetServices CRD (on-prem switches); default not. */
  readonly hostedNetServices?: boolean;
}

interface Ready {
  readonly url: string;
  readonly admin: string;
  readonly kubeconfigs: Readonly<Record<string, string>>;
}

/** Namespaces the server makes itself: never emptied. */
const SYSTEM_NAMESPACES = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
/** What reset() deletes: every object of these, but in system namespaces. */
const RESET_RESOURCES = ['hostednetservices', 'services', 'configmaps', 'secrets', 'events', 'dnsrecords', 'dnsrecords.kuadrant.io', 'gateways', 'httproutes', 'dnspolicies', 'nodes', 'infrastructures', 'dnses', 'machineconfigs', 'pods', 'serviceaccounts', 'daemonsets', 'deployments'];
const TEST_LABEL = 'lbdns.test/made-by';

async function crdsOf(file: string): Promise<StoredObject[]> {
  return (loadAll(await readFile(file, 'utf8')) as StoredObject[]).filter((d) => d?.kind === 'CustomResourceDefinition');
}

/** Starts a fresh cluster: etcd and kube-apiserver in one process, the CRDs installed and established. */
export async function startApiServer(opts: ResetOptions & { readonly sans?: readonly string[] } = {}): Promise<ApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-apiserver-'));
  const args = ['-dir', dir, '-user', LBDNS_USER, '-user', `${LBDNS_ADMIN}=system:masters`, ...Object.entries(IDENTITIES).flatMap(([user, groups]) => ['-user', `${user}=${groups.join(',')}`]), ...(opts.sans ?? []).flatMap((n) => ['-san', n])];
  let peer: PeerProcess | undefined;
  let ready: Ready | undefined;
  let ca: string | undefined;
  let token: string | undefined;
  let auditFrom = 0;
  const namespaces = new Set<string>();
  let crds: { infrastructure: InfrastructureCrd; hostedNetServices: boolean } | undefined;

  const launch = async (): Promise<void> => {
    peer = startPeer(peerBinary('kube-apiserver'), args);
    await waitForOutput(peer, 'kube-apiserver', (out) => /^\{"admin".*"ready":true/m.test(out), 60_000);
    ready = JSON.parse(/^\{"admin".*$/m.exec(peer.output())?.[0] ?? '{}') as Ready;
    ca ??= await readFile(join(dir, 'ca.crt'), 'utf8');
    token ??= /"token":\s*"([^"]+)"/.exec(await readFile(ready.admin, 'utf8'))?.[1];
  };

  // A 429 is the server asking to come back (a CRD's storage starting up): the admin client waits, as kubectl does.
  const call = async <T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await callOnce<T>(method, path, body, contentType);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 429) || attempt >= 100) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const callOnce = <T>(method: string, path: string, body: unknown, contentType: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers = { authorization: `Bearer ${token}`, accept: 'application/json', ...(payload ? { 'content-type': contentType, 'content-length': String(payload.length) } : {}) };
      const req = request(new URL(path, ready?.url), { method, ca, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text === '' ? {} : JSON.parse(text);
          } catch {
            parsed = { message: `${method} ${path}: ${text.trim()}` };
          }
          if ((res.statusCode ?? 0) >= 300) reject(new ApiError(res.statusCode ?? 0, parsed as ApiError['body']));
          else resolve(parsed as T);
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  const ensureNamespace = async (namespace: string | undefined): Promise<void> => {
    if (namespace === undefined || namespaces.has(namespace) || SYSTEM_NAMESPACES.has(namespace)) return;
    await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
    namespaces.add(namespace);
  };

  const objectPath = (info: ResourceInfo, namespace: string | undefined, name: string): string => `${collectionPath(info, namespace)}/${name}`;
  const refPath = (ref: ObjectRef): string => objectPath(infoOfResource(ref.resource), ref.namespace, ref.name);
  const objPath = (obj: KubeObject): string => objectPath(infoOfObject(obj), obj.metadata?.namespace, obj.metadata?.name ?? '');

  const waitEstablished = async (name: string): Promise<void> => {
    for (let i = 0; ; i++) {
      const got = await call<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
      if (i > 400) throw new Error(`CRD ${name} not established after 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const waitGone = async (path: string): Promise<void> => {
    for (let i = 0; ; i++) {
      const gone = await call('GET', path).then(
        () => false,
        (err: unknown) => err instanceof ApiError && err.status === 404,
      );
      if (gone) return;
      if (i > 400) throw new Error(`${path} still there after 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const installCrd = async (crd: StoredObject): Promise<void> => {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    const current = await call<StoredObject>('GET', path).catch(() => undefined);
    if (current === undefined) await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    else await call('PUT', path, { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion } });
    await waitEstablished(crd.metadata.name);
    // Established comes before the storage serves: a write then gets 429 "storage is (re)initializing".
    const spec = crd.spec as { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
    const version = spec.versions.find((v) => v.served)?.name;
    for (let i = 0; ; i++) {
      const ok = await call('GET', `/apis/${spec.group}/${version}/${spec.names.plural}?limit=1`).then(
        () => true,
        () => false,
      );
      if (ok) return;
      if (i > 400) throw new Error(`CRD ${crd.metadata.name} not served after 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const deleteAll = async (resource: string): Promise<void> => {
    const info = infoOfResource(resource);
    const list = await call<{ items: StoredObject[] }>('GET', collectionPath(info, undefined)).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return { items: [] };
      throw err;
    });
    await Promise.all(
      list.items
        .filter((o) => o.metadata.namespace === undefined || !SYSTEM_NAMESPACES.has(o.metadata.namespace) || o.metadata.labels?.[TEST_LABEL] !== undefined)
        .filter((o) => !(o.kind === 'Service' && o.metadata.namespace === 'default' && o.metadata.name === 'kubernetes'))
        .map((o) => call('DELETE', objectPath(info, o.metadata.namespace, o.metadata.name), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 }).catch(() => undefined)),
    );
  };

  const api: ApiServer = {
    get url() {
      return ready?.url ?? '';
    },
    get ca() {
      return ca ?? '';
    },
    get adminToken() {
      return token ?? '';
    },
    get kubeconfig() {
      return ready?.kubeconfigs[LBDNS_ADMIN] ?? '';
    },
    get userKubeconfig() {
      return ready?.kubeconfigs[LBDNS_USER] ?? '';
    },
    kubeconfigOf: (user) => {
      const path = ready?.kubeconfigs[user];
      if (path === undefined) throw new Error(`apiserver.ts: ${user} is not one of IDENTITIES`);
      return path;
    },
    call,
    create: async (obj) => {
      const info = infoOfObject(obj);
      await ensureNamespace(obj.metadata?.namespace);
      const created = await call<StoredObject>('POST', collectionPath(info, obj.metadata?.namespace), obj);
      if (!info.status || obj.status === undefined) return created as never;
      return call('PATCH', `${objPath(obj)}/status`, { status: obj.status }, 'application/merge-patch+json');
    },
    get: (ref) =>
      call('GET', refPath(ref)).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return undefined;
        throw err;
      }) as never,
    list: async (resource, namespace) => (await call<{ items: never[] }>('GET', collectionPath(infoOfResource(resource), namespace))).items,
    update: async (obj) => {
      const info = infoOfObject(obj);
      const current = await call<StoredObject>('GET', objPath(obj));
      const rv = current.metadata.resourceVersion;
      const { status, ...main } = obj;
      const replaced = await call<StoredObject>('PUT', objPath(obj), { ...main, metadata: { ...obj.metadata, resourceVersion: rv } });
      if (!info.status) return replaced as never;
      return call('PUT', `${objPath(obj)}/status`, { ...replaced, status: status ?? {} });
    },
    mergePatch: async (ref, patch) => {
      const info = infoOfResource(ref.resource);
      const { status, ...main } = patch;
      let result: unknown;
      if (Object.keys(main).length > 0 || !info.status) result = await call('PATCH', refPath(ref), info.status ? main : patch, 'application/merge-patch+json');
      if (info.status && status !== undefined) result = await call('PATCH', `${refPath(ref)}/status`, { status }, 'application/merge-patch+json');
      return result as never;
    },
    patchStatus: (ref, status) => call('PATCH', `${refPath(ref)}/status`, { status }, 'application/merge-patch+json'),
    delete: async (ref) => {
      await call('DELETE', refPath(ref), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
    },
    ensureNamespace,
    grant: async (rules) => {
      const labels = { [TEST_LABEL]: 'grant' };
      const byNamespace = new Map<string | undefined, RbacRule[]>();
      for (const rule of rules) byNamespace.set(rule.namespace, [...(byNamespace.get(rule.namespace) ?? []), rule]);
      let n = 0;
      for (const [namespace, group] of byNamespace) {
        const name = `lbdns-test-grant-${++n}`;
        const policy = group.map(({ namespace: _ns, ...rule }) => rule);
        const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: LBDNS_USER }];
        if (namespace === undefined) {
          await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules: policy });
          await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name, labels }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects });
        } else {
          await ensureNamespace(namespace);
          await call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace, labels }, rules: policy });
          await call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace, labels }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects });
        }
      }
    },
    dryRunApply: async (obj) => {
      await ensureNamespace(infoOfObject(obj).namespaced ? obj.metadata?.namespace : undefined);
      return call('PATCH', `${objPath(obj)}?dryRun=All&fieldManager=lbdns-test&fieldValidation=Strict&force=true`, obj, 'application/apply-patch+yaml');
    },
    applyRbac: async (objects) => {
      for (const obj of objects) {
        const namespace = obj.metadata?.namespace;
        await ensureNamespace(namespace);
        await call('POST', collectionPath(infoOfObject(obj), namespace), { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata?.labels, [TEST_LABEL]: 'manifest' } } });
      }
    },
    requests: async (user) => {
      const text = await readFile(join(dir, 'audit.log'), 'utf8').catch(() => '');
      return text
        .slice(auditFrom)
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { user: { username: string }; verb: string; requestURI: string; objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string }; responseStatus?: { code?: number } })
        .filter((e) => (user === undefined ? e.user.username === LBDNS_ADMIN || e.user.username === LBDNS_USER : e.user.username === user))
        .map((e) => ({ user: e.user.username, verb: e.verb, uri: e.requestURI, resource: e.objectRef?.resource, subresource: e.objectRef?.subresource, namespace: e.objectRef?.namespace, name: e.objectRef?.name, apiGroup: e.objectRef?.apiGroup, status: e.responseStatus?.code ?? 0 }));
    },
    clearRequests: async () => {
      auditFrom = (await readFile(join(dir, 'audit.log'), 'utf8').catch(() => '')).length;
    },
    reset: async (opts: ResetOptions = {}) => {
      const infrastructure = opts.infrastructureCrd ?? 'release-4.19';
      const hostedNetServices = opts.hostedNetServices ?? false;
      await Promise.all(RESET_RESOURCES.map(deleteAll));
      for (const kind of ['clusterrolebindings', 'clusterroles']) {
        const list = await call<{ items: StoredObject[] }>('GET', `/apis/rbac.authorization.k8s.io/v1/${kind}?labelSelector=${encodeURIComponent(TEST_LABEL)}`);
        await Promise.all(list.items.map((o) => call('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${o.metadata.name}`)));
      }
      for (const kind of ['rolebindings', 'roles']) {
        const list = await call<{ items: StoredObject[] }>('GET', `/apis/rbac.authorization.k8s.io/v1/${kind}?labelSelector=${encodeURIComponent(TEST_LABEL)}`);
        await Promise.all(list.items.map((o) => call('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.metadata.namespace}/${kind}/${o.metadata.name}`)));
      }
      if (crds?.infrastructure !== infrastructure) {
        for (const crd of await crdsOf(INFRASTRUCTURE_CRDS[infrastructure])) await installCrd(crd);
      }
      if (crds?.hostedNetServices !== hostedNetServices) {
        for (const crd of await crdsOf(HOSTED_NET_SERVICES_CRD)) {
          if (hostedNetServices) {
            await installCrd(crd);
          } else if (crds !== undefined) {
            const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
            await call('DELETE', path);
            await waitGone(path);
          }
        }
      }
      crds = { infrastructure, hostedNetServices };
      await api.clearRequests();
    },
    installHostedNetServices: async () => {
      for (const crd of await crdsOf(HOSTED_NET_SERVICES_CRD)) await installCrd(crd);
      crds = { infrastructure: crds?.infrastructure ?? 'release-4.19', hostedNetServices: true };
    },
    removeHostedNetServices: async () => {
      for (const crd of await crdsOf(HOSTED_NET_SERVICES_CRD)) {
        const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
        await call('DELETE', path);
        await waitGone(path);
      }
      crds = { infrastructure: crds?.infrastructure ?? 'release-4.19', hostedNetServices: false };
    },
    stop: async () => {
      await peer?.stop();
    },
    start: launch,
    output: () => peer?.output() ?? '',
    close: async () => {
      await peer?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };

  try {
    await launch();
    for (const file of BASE_CRDS) for (const crd of await crdsOf(file)) await installCrd(crd);
    await api.reset(opts);
  } catch (err) {
    await api.close();
    throw err;
  }
  return api;
}

let shared: Promise<ApiServer> | undefined;

/** The server the tests of this process share; started at the first call, stopped when the process exits. */
export function sharedApiServer(): Promise<ApiServer> {
  shared ??= startApiServer();
  return shared;
}
