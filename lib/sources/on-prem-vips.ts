import type { SourceContribution } from './cluster-data.js';
import type { Endpoint, LbName, OnPremPlatform } from '../model.js';
import type { Infrastructure } from './infra-lbs.js';
import { describeObject, ipsFromApi, type Warn } from './untrusted.js';

export type OnPremStatusKey = 'baremetal' | 'vsphere' | 'openstack' | 'ovirt' | 'nutanix';

const STATUS_KEYS: Readonly<Record<OnPremPlatform, OnPremStatusKey>> = {
  BareMetal: 'baremetal',
  VSphere: 'vsphere',
  OpenStack: 'openstack',
  oVirt: 'ovirt',
  Nutanix: 'nutanix',
};

/** `status.platformStatus.<key>` of an on-prem platform, as far as lbdns reads it. */
export interface OnPremPlatformStatus {
  readonly apiServerInternalIPs?: unknown;
  readonly apiServerInternalIP?: unknown;
  readonly ingressIPs?: unknown;
  readonly ingressIP?: unknown;
  readonly dnsRecordsType?: unknown;
  readonly loadBalancer?: { readonly type?: unknown } | null;
}

export function onPremPlatformOf(infra: Infrastructure | undefined): OnPremPlatform | undefined {
  const type = infra?.status?.platformStatus?.type;
  return typeof type === 'string' && Object.hasOwn(STATUS_KEYS, type) ? (type as OnPremPlatform) : undefined;
}

export const ON_PREM_PLATFORMS = Object.keys(STATUS_KEYS) as readonly OnPremPlatform[];

export function onPremStatusKey(platform: OnPremPlatform): OnPremStatusKey {
  return STATUS_KEYS[platform];
}

/**
 * The VIP lists, with the single-address fields the API deprecated as a fallback for
 * clusters installed before the lists existed (one family only).
 */
function vips(status: OnPremPlatformStatus, list: 'apiServerInternalIPs' | 'ingressIPs', where: string, warn: Warn): { endpoints: Endpoint[]; refused?: string } {
  const single = list === 'apiServerInternalIPs' ? 'apiServerInternalIP' : 'ingressIP';
  const values = status[list] ?? (status[single] === undefined || status[single] === '' ? [] : [status[single]]);
  const at = `${where}.${status[list] === undefined ? single : list}`;
  const endpoints = ipsFromApi(values, at, warn).map((ip): Endpoint => ({ kind: 'ip', ip }));
  const given = values !== null && !(Array.isArray(values) && values.length === 0);
  return endpoints.length === 0 && given ? { endpoints, refused: `every entry of ${at} was refused` } : { endpoints };
}

const EXTERNAL_REASON = 'dnsRecordsType is External: the records are served by a DNS server outside the cluster; lbdns only forwards them';

/**
 * api and api-int → `apiServerInternalIPs`, `*.apps` → `ingressIPs`, one address per family.
 * Under `loadBalancer.type: UserManaged` these name the user's own LB and are served alike;
 * under `dnsRecordsType: External` an outside DNS server answers those names, so none is
 * served, but the VIPs are still what print-records prints and check-dns expects there.
 */
export function onPremContribution(infra: Infrastructure | undefined, warn: Warn): SourceContribution {
  const platform = onPremPlatformOf(infra);
  if (platform === undefined) return {};
  const key = STATUS_KEYS[platform];
  const status = ((infra?.status?.platformStatus as Record<string, unknown> | undefined)?.[key] ?? {}) as OnPremPlatformStatus;
  const where = `${describeObject('infrastructure', infra?.metadata)} status.platformStatus.${key}`;
  const api = vips(status, 'apiServerInternalIPs', where, warn);
  const ingress = vips(status, 'ingressIPs', where, warn);
  const lbs: Record<LbName, Endpoint[]> = { api: api.endpoints, 'api-int': api.endpoints, ingress: ingress.endpoints };
  // VIPs named with data all refused are bad data, not "no VIP": the names keep what they served.
  const refusedLbs: Partial<Record<LbName, string>> = {
    ...(api.refused === undefined ? {} : { api: api.refused, 'api-int': api.refused }),
    ...(ingress.refused === undefined ? {} : { ingress: ingress.refused }),
  };
  const read = Object.keys(refusedLbs).length > 0 ? { lbs, refusedLbs } : { lbs };
  if (status.dnsRecordsType !== 'External') return read;
  return { ...read, withheld: { api: EXTERNAL_REASON, 'api-int': EXTERNAL_REASON, ingress: EXTERNAL_REASON } };
}
