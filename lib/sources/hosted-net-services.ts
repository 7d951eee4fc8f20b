import type { SourceContribution } from './cluster-data.js';
import type { Servable } from '../model.js';
import { describeObject, ipFromApi, warnIgnored, type ApiObjectMeta, type Warn } from './untrusted.js';

/** The project's own singleton (manifests/crd-hostednetservices.yaml): the switches of the cluster-hosted DNS. */
export const HOSTED_NET_SERVICES = {
  group: 'lbdns.io',
  version: 'v1alpha1',
  plural: 'hostednetservices',
  name: 'cluster',
  path: '/apis/lbdns.io/v1alpha1/hostednetservices',
} as const;

export interface HostedNetServicesCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
}

/** `hostednetservices.lbdns.io` as far as lbdns reads it; every field may be missing. */
export interface HostedNetServices {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ApiObjectMeta & { readonly generation?: number; readonly resourceVersion?: string };
  readonly spec?: {
    readonly dns?: { readonly nodesResolution?: unknown; readonly appsResolution?: unknown; readonly apiintIpAddress?: unknown };
  };
  readonly status?: {
    readonly apiServerInternalIpOwner?: string;
    readonly ingressIpOwner?: string;
    readonly conditions?: readonly HostedNetServicesCondition[];
  };
}

function switchedOff(obj: HostedNetServices, field: 'nodesResolution' | 'appsResolution', warn: Warn): string | undefined {
  const value = obj.spec?.dns?.[field];
  const where = `${describeObject('hostednetservices', obj.metadata)} spec.dns.${field}`;
  if (value === undefined || value === null || value === 'Enabled') return undefined;
  if (value === 'Disabled') return `${where} is Disabled`;
  warnIgnored(warn, where, value, 'is neither Enabled nor Disabled', 'taken as Enabled');
  return undefined;
}

/**
 * `nodesResolution: Disabled` withholds the node records, `appsResolution: Disabled` the
 * `*.apps` wildcard; `apiintIpAddress` is the address api-int should move to, which the
 * migration verifies before serving. No object at all: everything Enabled, api-int the VIP.
 */
export function switchesContribution(obj: HostedNetServices | undefined, warn: Warn): SourceContribution {
  if (obj === undefined) return {};
  const withheld: Partial<Record<Servable, string>> = {};
  const nodes = switchedOff(obj, 'nodesResolution', warn);
  if (nodes !== undefined) withheld.nodes = nodes;
  const apps = switchedOff(obj, 'appsResolution', warn);
  if (apps !== undefined) withheld.ingress = apps;
  const raw = obj.spec?.dns?.apiintIpAddress;
  const apiIntAddress = raw === undefined || raw === null || raw === '' ? undefined : ipFromApi(raw, `${describeObject('hostednetservices', obj.metadata)} spec.dns.apiintIpAddress`, warn);
  return { withheld, ...(apiIntAddress === undefined ? {} : { apiIntAddress }) };
}
