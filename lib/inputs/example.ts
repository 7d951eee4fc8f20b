import type { RawConfig } from './config.js';

/** The built-in example cluster behind `--example`: IP literals only, so it needs no network. */
export const EXAMPLE_CONFIG: RawConfig = {
  domain: 'mycluster.example.com',
  role: 'control-plane',
  loadBalancers: {
    api: ['10.0.0.10', '10.0.0.11', 'fd00:10::10'],
    apiInt: ['10.0.0.20', '10.0.0.21', 'fd00:10::20'],
    ingress: ['10.0.1.30', '10.0.1.31', 'fd00:10::30'],
  },
  nodes: {
    'master-0': ['10.0.0.5', 'fd00:10::5'],
    'master-1': ['10.0.0.6', 'fd00:10::6'],
    'master-2': ['10.0.0.7', 'fd00:10::7'],
  },
  upstreams: ['10.0.0.2', '10.0.0.3'],
};

/**
 * The example cluster's Gateway DNS, for `--example --gateway-zone ZONE`: a simple DNSPolicy on
 * one Gateway and a load-balanced one on a wildcard listener, as the API would hand them over,
 * with names in the first zone asked for, and the cluster id (the kube-system Namespace).
 */
export function exampleGatewayObjects(zone: string): { gateways: object[]; dnspolicies: object[]; clusterId: object[] } {
  const created = '2026-01-01T00:00:00Z';
  const gateway = (namespace: string, name: string, hostname: string, addresses: string[]) => ({
    metadata: { namespace, name, creationTimestamp: created },
    spec: { listeners: [{ name: 'https', hostname }] },
    status: { addresses: addresses.map((value) => ({ type: 'IPAddress', value })), listeners: [{ name: 'https', attachedRoutes: 1 }] },
  });
  const policy = (namespace: string, name: string, loadBalancing?: object) => ({
    metadata: { namespace, name, creationTimestamp: created },
    spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name }, ...(loadBalancing ? { loadBalancing } : {}) },
  });
  return {
    gateways: [gateway('shop', 'shop', `shop.${zone}`, ['192.0.2.10', '192.0.2.11']), gateway('store', 'store', `*.store.${zone}`, ['192.0.2.20', '2001:db8::20'])],
    dnspolicies: [policy('shop', 'shop'), policy('store', 'store', { weight: 120, geo: 'GEO-EU', defaultGeo: true })],
    clusterId: [{ metadata: { name: 'kube-system', uid: '0d0a2e1c-5b1e-4c8e-9f0a-000000000001' } }],
  };
}
