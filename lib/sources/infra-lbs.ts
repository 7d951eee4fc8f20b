import type { SourceContribution } from './cluster-data.js';
import type { LbName, Platform } from '../model.js';
import { describeObject, ipsFromApi, type ApiObjectMeta, type Warn } from './untrusted.js';

export type PlatformStatusKey = 'aws' | 'gcp' | 'azure';

interface CloudLoadBalancerConfig {
  readonly dnsType?: string;
  readonly clusterHosted?: {
    readonly apiIntLoadBalancerIPs?: unknown;
    readonly apiLoadBalancerIPs?: unknown;
    readonly ingressLoadBalancerIPs?: unknown;
  };
}

/** `infrastructures.config.openshift.io` as far as lbdns reads it; every field may be missing. */
export interface Infrastructure {
  readonly metadata?: ApiObjectMeta;
  readonly status?: {
    readonly apiServerInternalURI?: unknown;
    readonly platformStatus?: { readonly type?: unknown } & Partial<
      Record<PlatformStatusKey, { readonly cloudLoadBalancerConfig?: CloudLoadBalancerConfig | null }>
    >;
  };
}

const STATUS_KEYS: Readonly<Record<Platform, PlatformStatusKey>> = { AWS: 'aws', GCP: 'gcp', Azure: 'azure' };

/** The three lists under `cloudLoadBalancerConfig.clusterHosted`, by the LB each describes. */
export const STATUS_LISTS = {
  api: 'apiLoadBalancerIPs',
  'api-int': 'apiIntLoadBalancerIPs',
  ingress: 'ingressLoadBalancerIPs',
} as const satisfies Record<LbName, string>;

export function platformStatusKey(platform: Platform): PlatformStatusKey {
  return STATUS_KEYS[platform];
}

/** The cloud platforms lbdns serves; anything else (bare metal, vSphere, None…) is undefined. */
export function platformOf(infra: Infrastructure | undefined): Platform | undefined {
  const type = infra?.status?.platformStatus?.type;
  return typeof type === 'string' && Object.hasOwn(STATUS_KEYS, type) ? (type as Platform) : undefined;
}

/** The cluster's own switch between cluster-hosted DNS and the cloud's, where its platform has one. */
export interface ClusterDnsType {
  /** `status.platformStatus.aws.cloudLoadBalancerConfig.dnsType`, for messages. */
  readonly field: string;
  /** `ClusterHosted`, `PlatformDefault`, or undefined when the field is absent. */
  readonly value: string | undefined;
}

/** undefined off AWS, GCP and Azure: other platforms have no such field. */
export function clusterDnsType(infra: Infrastructure | undefined): ClusterDnsType | undefined {
  const platform = platformOf(infra);
  if (platform === undefined) return undefined;
  const key = platformStatusKey(platform);
  const value = infra?.status?.platformStatus?.[key]?.cloudLoadBalancerConfig?.dnsType;
  return { field: `status.platformStatus.${key}.cloudLoadBalancerConfig.dnsType`, value: typeof value === 'string' ? value : undefined };
}

/**
 * The LBs whose `clusterHosted` lists the Corefile reads: api and api-int. The ingress list
 * is a copy of the router Service's status, written by whoever last noticed a change; read
 * beside the Service it would keep serving an old router IP until someone rewrites it.
 */
const SERVED_LISTS: readonly LbName[] = ['api-int', 'api'];

/**
 * The api and api-int `clusterHosted` IP lists, read only when `dnsType` is `ClusterHosted`:
 * under `PlatformDefault` the cloud's DNS serves these names and the object says nothing
 * about them, so neither does the contribution. Under `ClusterHosted`, a missing list is an
 * empty one. They are a published copy, possibly old: `publishedLbs`, served only for an LB
 * nothing else names (see mergeContributions).
 */
export function infrastructureContribution(infra: Infrastructure | undefined, warn: Warn): SourceContribution {
  const platform = platformOf(infra);
  if (platform === undefined) return {};
  const key = platformStatusKey(platform);
  const config = infra?.status?.platformStatus?.[key]?.cloudLoadBalancerConfig;
  if (config?.dnsType !== 'ClusterHosted') return {};
  const object = describeObject('infrastructure', infra?.metadata);
  const lbs: Partial<Record<LbName, { kind: 'ip'; ip: string }[]>> = {};
  for (const lb of SERVED_LISTS) {
    const list = STATUS_LISTS[lb];
    const where = `${object} status.platformStatus.${key}.cloudLoadBalancerConfig.clusterHosted.${list}`;
    lbs[lb] = ipsFromApi(config.clusterHosted?.[list], where, warn).map((ip) => ({ kind: 'ip', ip }));
  }
  return { publishedLbs: lbs };
}
