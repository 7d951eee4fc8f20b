/**
 * An on-prem cluster (bare metal by default) in the real kube-apiserver, with the Infrastructure
 * CRD of either release and, optionally, the project's HostedNetServices CRD.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { node, realCluster, type ClusterFixture, type FakeClusterFixture, type Identity } from './cluster-fixture.js';
import { INFRASTRUCTURE_CRDS } from './apiserver.js';
import { resourceType, startKubeApiServer, type KubeApiServerOptions, type KubeObject } from './kube-api-server.js';
import { onPremStatusKey } from '../../lib/sources/on-prem-vips.js';
import type { OnPremPlatform } from '../../lib/model.js';

export const DOMAIN = 'metal.example.com';
export const API_VIP = '192.168.111.5';
export const INGRESS_VIP = '192.168.111.4';
export const CRDS = Object.keys(INFRASTRUCTURE_CRDS) as (keyof typeof INFRASTRUCTURE_CRDS)[];

export type OnPrem = ClusterFixture;

export const HNS = { resource: 'hostednetservices', name: 'cluster' } as const;

export function hostedNetServices(dns: Record<string, unknown>, name = 'cluster'): KubeObject {
  return { apiVersion: 'lbdns.io/v1alpha1', kind: 'HostedNetServices', metadata: { name }, spec: { dns } };
}

/** The cluster's Infrastructure: the platform's VIPs in its status. */
function infrastructure(platform: OnPremPlatform, status: Record<string, unknown> | undefined): KubeObject {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type: platform } },
    status: {
      platform,
      apiServerInternalURI: `https://api-int.${DOMAIN}:6443`,
      platformStatus: { type: platform, [onPremStatusKey(platform)]: status ?? { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP] } },
    },
  };
}

export interface OnPremOptions extends Identity {
  readonly platform?: OnPremPlatform;
  readonly crd?: keyof typeof INFRASTRUCTURE_CRDS;
  readonly status?: Record<string, unknown>;
  /** Install the HostedNetServices CRD. */
  readonly switches?: boolean;
  /** A server of the test's own, closed with the fixture: for a certificate that names more (api-int). */
  readonly own?: { readonly sans?: readonly string[] };
}

export interface FakeOnPremOptions extends Omit<OnPremOptions, 'rules' | 'as'> {
  /** RBAC rules and user of the test API server. */
  readonly server?: Pick<KubeApiServerOptions, 'rules' | 'user'>;
}

const HNS_TYPE = resourceType('lbdns.io/v1alpha1', 'hostednetservices', 'HostedNetServices', { hasStatus: true });

/** Empties the shared real kube-apiserver and seeds the cluster; the caller closes it. */
export async function startOnPrem(opts: OnPremOptions = {}): Promise<OnPrem> {
  const crds = { infrastructureCrd: opts.crd ?? 'main', hostedNetServices: opts.switches ?? false } as const;
  const objects = [infrastructure(opts.platform ?? 'BareMetal', opts.status), node('master-0', ['192.168.111.20'])];
  return realCluster({ crds, own: opts.own, identity: opts, objects, dirPrefix: 'lbdns-onprem-' });
}
/** The same cluster in the test API server, for fault tests; the caller closes it. */
export async function startFakeOnPrem(opts: FakeOnPremOptions = {}): Promise<FakeClusterFixture> {
  const platform = opts.platform ?? 'BareMetal';
  const server = await startKubeApiServer({
    ...opts.server,
    extraResources: opts.switches ? [HNS_TYPE] : [],
  });
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-onprem-'));
  server.create(infrastructure(platform, opts.status));
  server.create(node('master-0', ['192.168.111.20']));
  return {
    server,
    dir,
    kubeconfig: await server.writeKubeconfig(dir),
    out: join(dir, 'Corefile'),
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function withFakeOnPrem(opts: FakeOnPremOptions, body: (c: FakeClusterFixture) => Promise<void>): Promise<void> {
  const cluster = await startFakeOnPrem(opts);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}

export async function withOnPrem(opts: OnPremOptions, body: (c: OnPrem) => Promise<void>): Promise<void> {
  const cluster = await startOnPrem(opts);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}
