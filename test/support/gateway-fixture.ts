/**
 * Gateway DNS: builders for the objects the scenarios create, on the real kube-apiserver
 * (which has the Gateway API and Kuadrant CRDs of test/fixtures/crds); and the same kinds in
 * the test API server (group, version, scope and status subresource read from each CRD) for
 * the benchmarks that drive it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load as parseYaml } from 'js-yaml';
import { startCluster, startFakeCluster, type ClusterFixture, type FakeClusterFixture, type FakeClusterSeed, type RealClusterSeed } from './cluster-fixture.js';
import { shortCode } from '../../lib/sources/gateway-endpoints.js';
import { resourceType, type KubeObject, type ResourceType } from './kube-api-server.js';

const CRD_DIR = fileURLToPath(new URL('../fixtures/crds/', import.meta.url));

export const GATEWAY_CRD_FILES = {
  gateways: 'gateway.networking.k8s.io_gateways.yaml',
  httproutes: 'gateway.networking.k8s.io_httproutes.yaml',
  dnspolicies: 'kuadrant.io_dnspolicies.yaml',
  dnsrecords: 'kuadrant.io_dnsrecords.yaml',
} as const;

interface CrdDoc {
  spec: { group: string; scope: string; names: { plural: string; kind: string }; versions: { name: string; storage?: boolean; subresources?: { status?: object } }[] };
}

/** The resource a CRD defines, at its storage version. */
function crdResource(file: string): ResourceType {
  const doc = parseYaml(readFileSync(`${CRD_DIR}${file}`, 'utf8')) as CrdDoc;
  const version = doc.spec.versions.find((v) => v.storage) ?? doc.spec.versions[0];
  if (version === undefined) throw new Error(`${file}: no version`);
  return resourceType(`${doc.spec.group}/${version.name}`, doc.spec.names.plural, doc.spec.names.kind, {
    namespaced: doc.spec.scope === 'Namespaced',
    hasStatus: version.subresources?.status !== undefined,
  });
}

export const GATEWAY_RESOURCES: readonly ResourceType[] = Object.values(GATEWAY_CRD_FILES).map(crdResource);

/** The kube-system Namespace as the test server holds it: its UID is the cluster id in a load-balanced leaf's name. */
export const KUBE_SYSTEM: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: '6c1f0b9e-2d4a-4c1e-9a53-0e5b7d2f8a11' } };

export const ZONE = 'gw.example.net';
export const NS = 'shop';

/** The same cluster in the test API server, serving the four Gateway DNS kinds too (fault tests and the API benchmarks). */
export async function startFakeGatewayCluster(seed: FakeClusterSeed = {}): Promise<FakeClusterFixture> {
  const namespaces = resourceType('v1', 'namespaces', 'Namespace', { custom: false });
  const cluster = await startFakeCluster({ ...seed, server: { ...seed.server, extraResources: [...GATEWAY_RESOURCES, namespaces, ...(seed.server?.extraResources ?? [])] } });
  cluster.server.create(KUBE_SYSTEM);
  return cluster;
}

/** The seeded OpenShift cluster of cluster-fixture; the real server has the four Gateway DNS CRDs. */
export function startGatewayCluster(seed: RealClusterSeed = {}): Promise<ClusterFixture> {
  return startCluster(seed);
}

/**
 * The leaf Kuadrant names for a load-balanced Gateway's IP addresses under `klb`:
 * `<shortCode(kube-system UID)>-<shortCode(NAME-NAMESPACE)>.klb`.
 */
export async function leafName(c: ClusterFixture, klb: string, gatewayName = 'gw', namespace = NS): Promise<string> {
  const kubeSystem = await c.server.get<{ metadata: { uid: string } }>({ resource: 'namespaces', name: 'kube-system' });
  if (kubeSystem === undefined) throw new Error('the real API server has no kube-system Namespace');
  return `${shortCode(kubeSystem.metadata.uid)}-${shortCode(`${gatewayName}-${namespace}`)}.${klb}`;
}

export interface ListenerSeed {
  readonly name: string;
  readonly hostname?: string;
  /** status.listeners[].attachedRoutes; default 1. */
  readonly attachedRoutes?: number;
}

export function gateway(name: string, listeners: readonly ListenerSeed[], addresses: readonly { type?: string; value: string }[], namespace = NS): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: {
      gatewayClassName: 'istio',
      listeners: listeners.map((l) => ({ name: l.name, port: 80, protocol: 'HTTP', ...(l.hostname === undefined ? {} : { hostname: l.hostname }) })),
    },
    status: {
      addresses: addresses.map((a) => ({ type: a.type ?? 'IPAddress', value: a.value })),
      listeners: listeners.map((l) => ({ name: l.name, attachedRoutes: l.attachedRoutes ?? 1, supportedKinds: [], conditions: [] })),
    },
  };
}

export function httpRoute(name: string, hostnames: readonly string[], parent: { gateway: string; sectionName?: string }, namespace = NS): KubeObject {
  const parentRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: parent.gateway, ...(parent.sectionName ? { sectionName: parent.sectionName } : {}) };
  const condition = { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 };
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace },
    spec: { parentRefs: [parentRef], hostnames },
    status: { parents: [{ parentRef, controllerName: 'example.net/gateway-controller', conditions: [condition] }] },
  };
}

export function dnsPolicy(
  name: string,
  target: { gateway: string; sectionName?: string },
  opts: { loadBalancing?: { weight: number; geo: string; defaultGeo: boolean }; excludeAddresses?: string[] } = {},
  namespace = NS,
): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1',
    kind: 'DNSPolicy',
    metadata: { name, namespace },
    spec: {
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: target.gateway, ...(target.sectionName ? { sectionName: target.sectionName } : {}) },
      providerRefs: [{ name: 'lbdns' }],
      ...(opts.loadBalancing ? { loadBalancing: opts.loadBalancing } : {}),
      ...(opts.excludeAddresses ? { excludeAddresses: opts.excludeAddresses } : {}),
    },
  };
}

export interface KuadrantEndpointSeed {
  readonly dnsName: string;
  readonly recordType: string;
  readonly targets: readonly string[];
  readonly recordTTL?: number;
  readonly setIdentifier?: string;
  readonly providerSpecific?: readonly { name: string; value: string }[];
}

export function kuadrantRecord(name: string, rootHost: string, endpoints: readonly KuadrantEndpointSeed[], opts: { zone?: string; namespace?: string } = {}): KubeObject {
  return {
    apiVersion: 'kuadrant.io/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name, namespace: opts.namespace ?? NS, labels: { 'kuadrant.io/coredns-zone-name': opts.zone ?? ZONE } },
    spec: { rootHost, providerRef: { name: 'lbdns' }, endpoints: endpoints.map((e) => ({ recordTTL: 60, ...e })) },
  };
}

/** Asks a loopback DNS server once over UDP; the answer section as `OWNER TYPE DATA` lines, in order. */
export async function ask(address: { host: string; port: number }, name: string, type: 'A' | 'AAAA' | 'CNAME'): Promise<string[]> {
  const { createSocket } = await import('node:dgram');
  const packet = await import('dns-packet');
  const socket = createSocket('udp4');
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer for ${name} ${type}`)), 2000);
      socket.on('message', (msg) => {
        clearTimeout(timer);
        const reply = packet.decode(msg);
        resolve((reply.answers ?? []).map((rr) => `${rr.name} ${rr.type} ${String((rr as { data: unknown }).data)}`));
      });
      socket.send(packet.encode({ type: 'query', id: 7, flags: packet.RECURSION_DESIRED, questions: [{ type, name }] }), address.port, address.host);
    });
  } finally {
    socket.close();
  }
}
