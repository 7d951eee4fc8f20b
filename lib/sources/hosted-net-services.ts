import type { SourceContribution } from './cluster-data.js';
import type { NodeApiInt, Servable, VipOwners } from '../model.js';
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
    readonly nodes?: unknown;
  };
}

/** Where api-int is, cluster-wide: the address asked for, and which Nodes answer it. */
export interface ApiIntRollout {
  /** What every node should answer for api-int: the asked `apiintIpAddress`, or the API VIP. */
  readonly target: string;
  /** Every Node answers `target`. */
  readonly complete: boolean;
  /** One per Node, by name; `apiIntServes` absent for a node that has not reported. */
  readonly nodes: readonly { readonly name: string; readonly apiIntServes?: string; readonly done: boolean }[];
  /** For a condition and a log line: how many nodes are done, and which are not. */
  readonly summary: string;
}

const sameAddresses = (a: string, b: string) => a.split(',').sort().join(',') === b.split(',').sort().join(',');
/** Names a summary spells out; the rest are counted. */
const SUMMARY_NAMES = 5;

/**
 * The cluster-wide answer to "is the move done?": each Node of the cluster against what its
 * monitor last reported. An entry of a Node that no longer exists does not count.
 */
export function apiIntRollout(target: string, nodeNames: readonly string[], entries: readonly NodeApiInt[]): ApiIntRollout {
  const reported = new Map(entries.map((e) => [e.name, e.apiIntServes]));
  const nodes = [...new Set(nodeNames)].sort().map((name) => {
    const apiIntServes = reported.get(name);
    return { name, ...(apiIntServes === undefined ? {} : { apiIntServes }), done: apiIntServes !== undefined && sameAddresses(apiIntServes, target) };
  });
  const pending = nodes.filter((n) => !n.done);
  const listed = pending.slice(0, SUMMARY_NAMES).map((n) => (n.apiIntServes === undefined ? `${n.name} has not reported` : `${n.name} answers ${n.apiIntServes || 'nothing'}`));
  const more = pending.length > SUMMARY_NAMES ? [`${pending.length - SUMMARY_NAMES} more`] : [];
  const summary = `${nodes.length - pending.length} of ${nodes.length} nodes answer api-int with ${target}${pending.length === 0 ? '' : `; ${[...listed, ...more].join('; ')}`}`;
  return { target, complete: pending.length === 0, nodes, summary };
}

/** `status.nodes` as the monitors write it; a malformed entry is left out. */
function reportedNodes(obj: HostedNetServices): NodeApiInt[] {
  const nodes = obj.status?.nodes;
  if (!Array.isArray(nodes)) return [];
  return nodes.flatMap((n: unknown) => {
    const { name, apiIntServes } = (n ?? {}) as { name?: unknown; apiIntServes?: unknown };
    return typeof name === 'string' && typeof apiIntServes === 'string' ? [{ name, apiIntServes }] : [];
  });
}

function ownersOf(obj: HostedNetServices): VipOwners {
  const { apiServerInternalIpOwner: api, ingressIpOwner: ingress } = (obj.status ?? {}) as { apiServerInternalIpOwner?: unknown; ingressIpOwner?: unknown };
  return { ...(typeof api === 'string' ? { api } : {}), ...(typeof ingress === 'string' ? { ingress } : {}) };
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
 * `status.nodes` is read too, for the cluster-wide rollout of an api-int move (apiIntRollout).
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
  const generation = obj.metadata?.generation;
  return { withheld, apiIntReported: reportedNodes(obj), vipOwners: ownersOf(obj), ...(apiIntAddress === undefined ? {} : { apiIntAddress }), ...(typeof generation === 'number' ? { switchesGeneration: generation } : {}) };
}
