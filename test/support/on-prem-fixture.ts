/**
 * An on-prem cluster (bare metal by default) in the test API server, validated by the real
 * Infrastructure CRD of either release, optionally with the project's HostedNetServices CRD.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { node, type ClusterFixture } from './cluster-fixture.js';
import { crdValidators, HOSTED_NET_SERVICES_CRD, INFRASTRUCTURE_CRDS } from './crd-validators.js';
import { resourceType, startKubeApiServer, type KubeApiServerOptions, type KubeObject } from './kube-api-server.js';
import { onPremStatusKey } from '../../lib/sources/on-prem-vips.js';
import type { OnPremPlatform } from '../../lib/model.js';

export const DOMAIN = 'metal.example.com';
export const API_VIP = '192.168.111.5';
export const INGRESS_VIP = '192.168.111.4';
export const CRDS = Object.keys(INFRASTRUCTURE_CRDS) as (keyof typeof INFRASTRUCTURE_CRDS)[];

export type OnPrem = ClusterFixture;

const HNS_TYPE = resourceType('lbdns.io/v1alpha1', 'hostednetservices', 'HostedNetServices', { hasStatus: true });
export const HNS = { resource: 'hostednetservices', name: 'cluster' } as const;

export function hostedNetServices(dns: Record<string, unknown>, name = 'cluster'): KubeObject {
  return { apiVersion: 'lbdns.io/v1alpha1', kind: 'HostedNetServices', metadata: { name }, spec: { dns } };
}

export interface OnPremOptions {
  readonly platform?: OnPremPlatform;
  readonly crd?: keyof typeof INFRASTRUCTURE_CRDS;
  readonly status?: Record<string, unknown>;
  /** Install the HostedNetServices CRD. */
  readonly switches?: boolean;
  /** RBAC rules and user of the test API server. */
  readonly server?: Pick<KubeApiServerOptions, 'rules' | 'user'>;
}

/** Starts the cluster; the caller closes it. */
export async function startOnPrem(opts: OnPremOptions = {}): Promise<OnPrem> {
  const platform = opts.platform ?? 'BareMetal';
  const server = await startKubeApiServer({
    ...opts.server,
    validators: crdValidators({ infrastructure: opts.crd ?? 'main', extra: opts.switches ? [HOSTED_NET_SERVICES_CRD] : [] }),
    extraResources: opts.switches ? [HNS_TYPE] : [],
  });
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-onprem-'));
  server.create({
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type: platform } },
    status: {
      platform,
      apiServerInternalURI: `https://api-int.${DOMAIN}:6443`,
      platformStatus: { type: platform, [onPremStatusKey(platform)]: opts.status ?? { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP] } },
    },
  });
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

export async function withOnPrem(opts: OnPremOptions, body: (c: OnPrem) => Promise<void>): Promise<void> {
  const cluster = await startOnPrem(opts);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
  }
}
