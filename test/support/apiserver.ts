/**
 * The real kube-apiserver with etcd (`make peers`, test/peers/kube-apiserver) on loopback, with
 * the CRDs lbdns reads and writes installed unchanged, and a small admin client for tests to
 * seed and change objects through the API as a cluster's own controllers would.
 */
import { request } from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { peerBinary, startPeer, waitForOutput, type PeerProcess } from './peers.js';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** A failed request: the HTTP status and the API's Status message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message?: string; reason?: string; details?: unknown },
  ) {
    super(`${status} ${body.reason ?? ''}: ${body.message ?? JSON.stringify(body)}`);
  }
}

export const FIXTURE_CRDS = fileURLToPath(new URL('../fixtures/crds/', import.meta.url));
const PROJECT_CRDS = fileURLToPath(new URL('../../manifests/', import.meta.url));

/** The CRDs every test server has: OpenShift's, Gateway API's, Kuadrant's and lbdns's own. */
export const CRD_FILES = [
  `${FIXTURE_CRDS}0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.crd.yaml`,
  `${FIXTURE_CRDS}0000_10_config-operator_01_dnses.crd.yaml`,
  `${FIXTURE_CRDS}0000_50_dns_01_dnsrecords.crd.yaml`,
  `${FIXTURE_CRDS}0000_80_machine-config_01_machineconfigs.crd.yaml`,
  `${FIXTURE_CRDS}gateway.networking.k8s.io_gateways.yaml`,
  `${FIXTURE_CRDS}gateway.networking.k8s.io_httproutes.yaml`,
  `${FIXTURE_CRDS}kuadrant.io_dnspolicies.yaml`,
  `${FIXTURE_CRDS}kuadrant.io_dnsrecords.yaml`,
  `${PROJECT_CRDS}crd-hostednetservices.yaml`,
];

interface Ready {
  readonly url: string;
  readonly admin: string;
  readonly kubeconfigs: Readonly<Record<string, string>>;
}

export interface ApiServer {
  readonly url: string;
  /** The admin's kubeconfig (system:masters). */
  readonly kubeconfig: string;
  /** The kubeconfig of a `-user` given at start. */
  kubeconfigOf(user: string): string;
  /** The admin's REST calls; a path is `/api/v1/…` or `/apis/GROUP/VERSION/…`. */
  get<T = KubeObject>(path: string): Promise<T>;
  create<T = KubeObject>(obj: KubeObject): Promise<T>;
  /** A JSON merge patch; `subresource` 'status' for the status. */
  patch<T = KubeObject>(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, patch: unknown, subresource?: 'status'): Promise<T>;
  delete(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void>;
  /** create, then the status through its subresource (a create drops it), as a controller writes it. */
  seed(obj: KubeObject): Promise<KubeObject>;
  /** Stops the server (the API goes away); start() brings the same cluster back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** What the server printed. */
  output(): string;
  close(): Promise<void>;
}

/** Plural resource names of the kinds tests write. */
const PLURALS: Readonly<Record<string, string>> = {
  Namespace: 'namespaces',
  Node: 'nodes',
  Service: 'services',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Event: 'events',
  ServiceAccount: 'serviceaccounts',
  Infrastructure: 'infrastructures',
  DNS: 'dnses',
  DNSRecord: 'dnsrecords',
  Gateway: 'gateways',
  HTTPRoute: 'httproutes',
  DNSPolicy: 'dnspolicies',
  HostedNetServices: 'hostednetservices',
  MachineConfig: 'machineconfigs',
  CustomResourceDefinition: 'customresourcedefinitions',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
};

export function pathOf(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, withName = true): string {
  const plural = PLURALS[obj.kind];
  if (plural === undefined) throw new Error(`apiserver.ts: no plural known for kind ${obj.kind}`);
  const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = obj.metadata.namespace === undefined ? '' : `/namespaces/${obj.metadata.namespace}`;
  return `${base}${ns}/${plural}${withName ? `/${obj.metadata.name}` : ''}`;
}

/**
 * Starts a fresh cluster: etcd and kube-apiserver in one process, the CRDs installed and
 * established. `users`: `NAME[=GROUP,GROUP…]` identities with a static token each.
 */
export async function startApiServer(opts: { users?: readonly string[] } = {}): Promise<ApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-apiserver-'));
  const args = ['-dir', dir, ...(opts.users ?? []).flatMap((u) => ['-user', u])];
  let peer: PeerProcess | undefined;
  let ready: Ready | undefined;
  let ca: string | undefined;
  let token: string | undefined;

  const launch = async (): Promise<void> => {
    peer = startPeer(peerBinary('kube-apiserver'), args);
    await waitForOutput(peer, 'kube-apiserver', (out) => /^\{"admin".*"ready":true/m.test(out), 60_000);
    ready = JSON.parse(/^\{"admin".*$/m.exec(peer.output())?.[0] ?? '{}') as Ready;
    ca ??= await readFile(join(dir, 'ca.crt'), 'utf8');
    token ??= /"token":\s*"([^"]+)"/.exec(await readFile(ready.admin, 'utf8'))?.[1];
  };

  const call = <T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const url = new URL(path, ready?.url);
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = request(url, { method, ca, headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(payload ? { 'content-type': contentType, 'content-length': payload.length } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const parsed = (text === '' ? {} : JSON.parse(text)) as T;
          if ((res.statusCode ?? 0) >= 300) reject(new ApiError(res.statusCode ?? 0, parsed as ApiError['body']));
          else resolve(parsed);
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  const api: ApiServer = {
    get url() {
      return ready?.url ?? '';
    },
    get kubeconfig() {
      return ready?.admin ?? '';
    },
    kubeconfigOf: (user) => {
      const path = ready?.kubeconfigs[user];
      if (path === undefined) throw new Error(`no kubeconfig for ${user}: give it in startApiServer's users`);
      return path;
    },
    get: (path) => call('GET', path),
    create: (obj) => call('POST', pathOf(obj, false), obj),
    patch: (obj, patch, subresource) => call('PATCH', `${pathOf(obj)}${subresource ? `/${subresource}` : ''}`, patch, 'application/merge-patch+json'),
    delete: async (obj) => {
      await call('DELETE', pathOf(obj));
    },
    seed: async (obj) => {
      const created = await api.create<KubeObject>(obj);
      return obj.status === undefined ? created : api.patch<KubeObject>(obj, { status: obj.status }, 'status');
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
    await installCrds(api);
  } catch (err) {
    await api.close();
    throw err;
  }
  return api;
}

async function installCrds(api: ApiServer): Promise<void> {
  const crds: KubeObject[] = [];
  for (const file of CRD_FILES) crds.push(...(loadAll(await readFile(file, 'utf8')) as KubeObject[]).filter((d) => d?.kind === 'CustomResourceDefinition'));
  await Promise.all(crds.map((crd) => api.create(crd)));
  for (const crd of crds) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    for (let i = 0; ; i++) {
      const got = await api.get<{ status?: { conditions?: { type: string; status: string }[] } }>(path);
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (i > 200) throw new Error(`CRD ${crd.metadata.name} not established after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
