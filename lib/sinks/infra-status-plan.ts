import { ConfigError, quote, ValidationError } from '../errors.js';
import { canonicalIp, sortUniqueIps } from '../grammar/ip.js';
import { LB_NAMES, LIMITS, type ClusterSpec, type LbName, type Platform, type Resolution } from '../model.js';
import { addressesOf } from '../resolve/record-set.js';
import { platformOf, platformStatusKey, STATUS_LISTS, type Infrastructure, type PlatformStatusKey } from '../sources/infra-lbs.js';

export type LbIpLists = Readonly<Record<LbName, readonly string[]>>;

/**
 * Sorted, de-duplicated IPs of the `owned` LBs (the others stay empty: another writer's
 * list is none of lbdns's business); more than the CRD's 16 is an error naming the list,
 * never a silent cut.
 */
export function lbIpLists(spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>, owned: readonly LbName[] = LB_NAMES): LbIpLists {
  const lists = Object.fromEntries(LB_NAMES.map((lb) => [lb, owned.includes(lb) ? sortUniqueIps(addressesOf(spec.lbs[lb], resolutions)) : []])) as Record<LbName, string[]>;
  for (const lb of owned) {
    if (lists[lb].length > LIMITS.maxIpsPerName) {
      throw new ValidationError(STATUS_LISTS[lb], lists[lb], `has ${lists[lb].length} IPs; the Infrastructure status takes at most ${LIMITS.maxIpsPerName}`, 'reduce the LB endpoints; lbdns does not cut the list silently');
    }
  }
  return lists;
}

/** The `owned` LBs one of whose host names has not answered: their lists hold only some of their IPs (see planStatusPatch). */
export function partialLbs(spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>, owned: readonly LbName[]): LbName[] {
  return owned.filter((lb) => spec.lbs[lb].some((e) => e.kind === 'hostname' && !resolutions.has(e.hostname)));
}

export interface StatusPlan {
  readonly platform: Platform;
  /** The merge patch for the status subresource; null when the status already says it. */
  readonly patch: object | null;
  /** The owned lists that differ, for the log. */
  readonly changed: readonly LbName[];
  /** Owned lists lbdns has no IP for, or only some IPs of the published ones: left as they are rather than emptied or shrunk. */
  readonly skipped: readonly LbName[];
  /** Of `skipped`, the lists left because one of the LB's host names has not answered: the status may be out of date. */
  readonly partial: readonly LbName[];
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = sortUniqueIps(a);
  const y = sortUniqueIps(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

function currentList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export interface PublishTarget {
  readonly platform: Platform;
  /** `aws` or `gcp`: the block of `status.platformStatus` that holds `cloudLoadBalancerConfig`. */
  readonly key: PlatformStatusKey;
}

/**
 * Where the lists go, or why they cannot: a platform lbdns does not publish for, a cluster
 * set to `PlatformDefault`, or one whose `dnsType` is not set and whose admin has not asked
 * lbdns to set it (`setDnsType`): the field is immutable once set. Known from the object
 * alone, so the command refuses at start instead of after waiting for LB data.
 */
export function publishTarget(infra: Infrastructure, setDnsType = false): PublishTarget {
  const rawType = infra.status?.platformStatus?.type;
  const platform = platformOf(infra);
  if (platform === undefined) {
    throw new ConfigError(`infrastructures.config.openshift.io/cluster: platform ${quote(rawType ?? null)} is not one lbdns publishes LB IPs for (AWS, GCP, Azure)`);
  }
  const key = platformStatusKey(platform);
  const block = infra.status?.platformStatus?.[key];
  // The API server defaults cloudLoadBalancerConfig wherever its CRD has it: a platform block without it is a CRD without it.
  if (block !== undefined && block !== null && block.cloudLoadBalancerConfig === undefined) {
    throw new ConfigError(
      `status.platformStatus.${key} has no cloudLoadBalancerConfig: this cluster's Infrastructure CRD has no such field for ${platform}, so there is nowhere to publish LB IPs; nothing was written`,
    );
  }
  const dnsType = block?.cloudLoadBalancerConfig?.dnsType;
  if (dnsType !== undefined && dnsType !== 'ClusterHosted') {
    throw new ConfigError(
      `status.platformStatus.${key}.cloudLoadBalancerConfig.dnsType is ${quote(dnsType)}: the cluster uses the cloud's DNS and the field is immutable, so lbdns will not publish LB IPs. Clusters that need ClusterHosted DNS must be installed that way`,
    );
  }
  if (dnsType === undefined && !setDnsType) {
    throw new ConfigError(
      `status.platformStatus.${key}.cloudLoadBalancerConfig.dnsType is not set: publishing would set it to ClusterHosted, which switches this cluster's DNS from the cloud's for good (the field is immutable once set). lbdns does that only when asked: pass --set-dns-type-cluster-hosted`,
    );
  }
  return { platform, key };
}

/**
 * What to write so the status says `lists` for the `owned` LBs, following the API's rules:
 * `dnsType` is immutable once set, so the first write carries `ClusterHosted` with the
 * lists, and a cluster already set to `PlatformDefault` is refused. Lists compare as sorted
 * sets with empty equal to absent, so a second writer (the ingress operator owns
 * `ingressLoadBalancerIPs`) and lbdns never flap. An empty list is never written: lbdns
 * not knowing an IP is not the LB having none.
 */
export function planStatusPatch(infra: Infrastructure, lists: LbIpLists, owned: readonly LbName[], setDnsType = false, partialOf: readonly LbName[] = []): StatusPlan {
  const { platform, key } = publishTarget(infra, setDnsType);
  const current = (infra.status?.platformStatus?.[key]?.cloudLoadBalancerConfig?.clusterHosted ?? {}) as Record<string, unknown>;
  // An LB whose host name has not answered has more IPs than lbdns knows: its list may grow, never shrink.
  const partial = owned.filter((lb) => partialOf.includes(lb) && lists[lb].length > 0 && currentList(current[STATUS_LISTS[lb]]).some((ip) => !lists[lb].includes(canonicalIp(ip) ?? ip)));
  const skipped = owned.filter((lb) => lists[lb].length === 0 || partial.includes(lb));
  const changed = owned.filter((lb) => !skipped.includes(lb) && !sameSet(currentList(current[STATUS_LISTS[lb]]), lists[lb]));
  if (changed.length === 0) return { platform, patch: null, changed, skipped, partial };
  const clusterHosted = Object.fromEntries(changed.map((lb) => [STATUS_LISTS[lb], [...lists[lb]]]));
  const patch = {
    metadata: { resourceVersion: (infra.metadata as { resourceVersion?: string } | undefined)?.resourceVersion },
    status: { platformStatus: { [key]: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted } } } },
  };
  return { platform, patch, changed, skipped, partial };
}
