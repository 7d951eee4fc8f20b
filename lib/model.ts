/**
 * The data model every command shares. Data flows one way:
 *   sources → ClusterSpec (validated input) → resolution → RecordSet → rendered Corefile / status patch.
 * Everything here is plain data so the core stays free of I/O.
 */

export type Role = 'control-plane' | 'worker' | 'bootstrap' | 'apps-only';
export const ROLES: readonly Role[] = ['control-plane', 'worker', 'bootstrap', 'apps-only'];

/** The three load balancers the cluster's names point at. */
export type LbName = 'api' | 'api-int' | 'ingress';
export const LB_NAMES: readonly LbName[] = ['api', 'api-int', 'ingress'];

/** What a node of a role serves, and what it cannot start without. */
export interface RoleTraits {
  /** LBs whose names it serves when they have an address. */
  readonly serves: readonly LbName[];
  /**
   * LBs it waits for: api is never required (a private cluster has no external API LB), nor
   * is `*.apps` on the bootstrap node, where the ingress LB appears only late.
   */
  readonly requires: readonly LbName[];
  /** Node names and the extra names (DNSRecords): every in-cluster client resolves them. */
  readonly clusterNames: boolean;
}

/**
 * The design's roles. Workers serve what control planes serve, since all in-cluster clients
 * use this DNS; bootstrap serves api-int and `*.apps`; apps-only is the BYO-DNS
 * design's CoreDNS for `*.apps` alone, the admin's DNS answering the rest.
 */
export const ROLE_TRAITS: Readonly<Record<Role, RoleTraits>> = {
  'control-plane': { serves: LB_NAMES, requires: ['api-int', 'ingress'], clusterNames: true },
  worker: { serves: LB_NAMES, requires: ['api-int', 'ingress'], clusterNames: true },
  bootstrap: { serves: ['api-int', 'ingress'], requires: ['api-int'], clusterNames: false },
  'apps-only': { serves: ['ingress'], requires: ['ingress'], clusterNames: false },
};

export type Platform = 'AWS' | 'GCP' | 'Azure';
export const PLATFORMS: readonly Platform[] = ['AWS', 'GCP', 'Azure'];

/** Platforms whose VIPs (apiServerInternalIPs, ingressIPs) the Infrastructure status names. */
export type OnPremPlatform = 'BareMetal' | 'VSphere' | 'OpenStack' | 'oVirt' | 'Nutanix';

/** What the cluster may switch off: an LB's names, or the node records. */
export type Servable = LbName | 'nodes';

/** An LB endpoint as a source gives it: an IP literal, or a hostname resolved to all its A and AAAA. */
export type Endpoint = { readonly kind: 'ip'; readonly ip: string } | { readonly kind: 'hostname'; readonly hostname: string };

export interface NodeEntry {
  /** RFC 1123 node name, lower case, as the Node object names it. */
  readonly name: string;
  /** Canonical IP literals, v4 and v6. */
  readonly ips: readonly string[];
}

/** The VIP owners a HostedNetServices status names (`apiServerInternalIpOwner`, `ingressIpOwner`), as last read. */
export interface VipOwners {
  readonly api?: string;
  readonly ingress?: string;
}

/** A node's entry of the HostedNetServices `status.nodes`: what its CoreDNS answers for api-int (addresses, comma-separated). */
export interface NodeApiInt {
  readonly name: string;
  readonly apiIntServes: string;
}

/** A name served in addition to api/api-int/*.apps: Managed ingress DNSRecords, Gateway `simple` records. */
export interface ExtraRecord {
  /** Absolute name without the trailing dot; may start with `*.`. */
  readonly name: string;
  readonly targets: readonly Endpoint[];
  /** Where it came from, for logs and `display` (e.g. `dnsrecord/openshift-ingress-operator/default-wildcard`). */
  readonly source: string;
  /** The record's own TTL (a DNSRecord's `recordTTL`); absent: the cluster-wide one. */
  readonly ttl?: number;
}

export interface ReloadSettings {
  readonly intervalSeconds: number;
  readonly jitterSeconds: number;
}

/** Validated input: what every command computes from its sources before anything is resolved. */
export interface ClusterSpec {
  readonly domain: string;
  readonly role: Role;
  readonly lbs: Readonly<Record<LbName, readonly Endpoint[]>>;
  readonly extraRecords: readonly ExtraRecord[];
  readonly nodes: readonly NodeEntry[];
  /**
   * What the cluster says not to serve, with the reason (on-prem `dnsRecordsType: External`,
   * a HostedNetServices switch set to Disabled): such names are left to the upstreams.
   */
  readonly withheld?: Readonly<Partial<Record<Servable, string>>>;
  /**
   * LBs the cluster names with data of which every entry was refused (malformed), with why:
   * bad data, not "no LB", so their names keep what they served, as for a host name with no answer.
   */
  readonly refusedLbs?: Readonly<Partial<Record<LbName, string>>>;
  /** Upstream resolvers, already filtered (no loopback, link-local or own addresses), at most 15. */
  readonly upstreams: readonly string[];
  /** TTL of the records lbdns serves, seconds. */
  readonly ttl: number;
  readonly reload: ReloadSettings;
  /** Absent: DEFAULTS.listen, every address on port 53. */
  readonly listen?: ListenSettings;
  /** CoreDNS's health and ready ports; absent: DEFAULTS'. */
  readonly healthPort?: number;
  readonly readyPort?: number;
  /** Gateway DNS (--gateway-zone): absent when no zone is configured. */
  readonly gateway?: GatewaySpec;
}

export type GatewayRecordType = 'A' | 'AAAA' | 'CNAME';

/**
 * One endpoint as Kuadrant's DNSRecord `spec.endpoints[]` holds it (an external-dns Endpoint,
 * field names as the CRD spells them): what Kuadrant's builder makes, before lbdns keeps
 * what is valid DNS of it (GatewayEndpoint).
 */
export interface KuadrantEndpoint {
  readonly dnsName: string;
  readonly recordType: GatewayRecordType;
  readonly targets: readonly string[];
  readonly recordTTL: number;
  readonly setIdentifier: string;
  readonly providerSpecific: readonly { readonly name: string; readonly value: string }[];
}

/**
 * One record lbdns serves of a KuadrantEndpoint (served-endpoints.ts): targets are canonical
 * IPs of the type's family, or one host name for a CNAME.
 */
export interface GatewayEndpoint {
  /** Lower case, no trailing dot; may start with `*.`. */
  readonly dnsName: string;
  readonly recordType: GatewayRecordType;
  readonly targets: readonly string[];
  readonly ttl: number;
  /** '' when the record is not one of a set. */
  readonly setIdentifier: string;
  /** providerSpecific `weight`: the share of a weighted set. */
  readonly weight?: number;
  /** providerSpecific `geo-code` as written (a DNS label, `GEO-EU`, `IE`), or `*` (the default geo); matched without regard to case. */
  readonly geo?: string;
}

/** The endpoints one API object asks for, with what decides who wins a name. */
/** An Event's involved object. */
export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
}

export interface OwnedEndpoints {
  /** `dnspolicy/NS/NAME gateway/NS/NAME`, `dnsrecord.kuadrant.io/NS/NAME`: for logs and `display`. */
  readonly source: string;
  readonly namespace: string;
  /** metadata.creationTimestamp (RFC 3339), of the newer object for a policy's Gateway: the oldest keeps a contested name. */
  readonly created: string;
  /** The configured zone its names must lie in. */
  readonly zone: string;
  readonly endpoints: readonly GatewayEndpoint[];
  /** The object `source` names first (the DNSPolicy, the Kuadrant DNSRecord): an Event about its names is about it. */
  readonly regarding?: InvolvedObject;
  /**
   * For a DNSPolicy's: its listener's host, and the builder that makes the endpoints Kuadrant's
   * builder makes for it, when asked (`display`); one builder for a policy's listeners.
   */
  readonly built?: { readonly host: string; readonly again: (host: string) => readonly BuiltEndpoint[] };
}

/** An endpoint Kuadrant's builder makes, the object it is for, and how what lbdns serves of it differs. */
export interface BuiltEndpoint {
  readonly endpoint: KuadrantEndpoint;
  /** `dnspolicy/NS/NAME`. */
  readonly source: string;
  readonly served?: string;
}

/** Kuadrant's DNS_DEFAULT_TTL (simple records, leaves, weighted CNAMEs) and DNS_DEFAULT_LB_TTL (geo and host CNAMEs). */
export interface GatewayTtls {
  readonly ttl: number;
  readonly loadBalancedTtl: number;
}

export interface GatewaySpec {
  /** Lower case, no trailing dot. */
  readonly zones: readonly string[];
  /** The TTLs of the endpoints built for DNSPolicies (--gateway-ttl, --gateway-lb-ttl). */
  readonly ttls: GatewayTtls;
  /** --geo-code: which geo of a load-balanced name this cluster answers; undefined: the default geo. */
  readonly geoCode: string | undefined;
  readonly owners: readonly OwnedEndpoints[];
}

/** The addresses one hostname resolved to. */
export interface Resolution {
  readonly hostname: string;
  /** Canonical, sorted, de-duplicated. */
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  /** The smallest TTL among the answers, seconds. */
  readonly ttlSeconds: number;
}

/** One DNS name the Corefile answers for, with everything the template needs precomputed. */
export interface NameRecord {
  /** Absolute name without the trailing dot; `*.apps.example.com` for a wildcard. */
  readonly name: string;
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  /** `api`, `api-int`, `ingress`, or an ExtraRecord's source. */
  readonly source: string;
  /**
   * CNAME records answered before the addresses, in chain order: the first one's owner is the
   * query name, each next one's the previous target. Stub resolvers do not chase a CNAME a
   * template answers alone, so the chain's final addresses come in the same answer.
   */
  readonly chain?: readonly { readonly owner: string; readonly target: string; readonly ttl: number }[];
  /** Owner of the address records when the name is a CNAME chain (its last target). */
  readonly addressOwner?: string;
  /** TTL of the address records, when not the cluster-wide one. */
  readonly addressTtl?: number;
}

/** `loadbalance weighted` weights of the addresses of one owner name (CoreDNS looks them up by the A owner). */
export interface WeightBlock {
  readonly owner: string;
  readonly weights: readonly { readonly ip: string; readonly weight: number }[];
}

export interface NodeRecord {
  readonly name: string;
  readonly fqdn: string;
  readonly v4: readonly string[];
  readonly v6: readonly string[];
}

/** Where CoreDNS answers: the server block's port, and one address (the `bind` plugin) or all. */
export interface ListenSettings {
  /** A canonical IP; absent: every address of the host. */
  readonly address?: string;
  readonly port: number;
}

/** What a Corefile template sees. Every string in it has been validated: none can carry Corefile syntax. */
export interface RecordSet {
  readonly domain: string;
  readonly role: Role;
  readonly ttl: number;
  readonly reload: ReloadSettings;
  readonly listen: ListenSettings;
  readonly healthPort: number;
  readonly readyPort: number;
  readonly cacheSeconds: number;
  readonly names: readonly NameRecord[];
  readonly nodes: readonly NodeRecord[];
  readonly upstreams: readonly string[];
  /** Weighted Gateway names; served only when the command writes a weight file (weightFile). */
  readonly weights?: readonly WeightBlock[];
  /** Path of the weight file next to the Corefile, for `loadbalance weighted`. */
  readonly weightFile?: string;
  /** Gateway DNS zones: their names are served from a zone file each, in a server block of the zone. */
  readonly gatewayZones?: readonly string[];
  /** Where each Gateway zone's file is, for the `file` plugin: set by the command that writes them. */
  readonly zoneFiles?: ReadonlyMap<string, string>;
  /**
   * Gateway names not served (no address yet, over the limit…) that a served wildcard of their
   * zone would otherwise answer with another owner's addresses: each is written as a name with
   * no address record, so CoreDNS answers it empty (NODATA) instead.
   */
  readonly unanswered?: readonly string[];
}

/** The source of a record read back from the files on disk after a restart: its owner is not known. */
export const SERVED_BEFORE = 'served before the restart';

export const LIMITS = {
  /** Per name, and per Infrastructure status list (the CRD's maxItems). */
  maxIpsPerName: 16,
  /** CoreDNS forward accepts at most 15 upstreams. */
  maxUpstreams: 15,
  minTtl: 1,
  /** CoreDNS's hosts plugin refuses a larger ttl, and the node records share the TTL. */
  maxTtl: 65535,
  /** CoreDNS reload rejects an interval under 2 s and a jitter under 1 s. */
  minReloadInterval: 2,
  maxReloadInterval: 3600,
  minReloadJitter: 1,
} as const;

export const DEFAULTS = {
  ttl: 60,
  /** Well below CoreDNS's own 30 s so a rewritten Corefile is served within about 3 s. */
  reload: { intervalSeconds: 2, jitterSeconds: 1 },
  listen: { port: 53 },
  healthPort: 18080,
  readyPort: 18181,
  cacheSeconds: 30,
  /** Kuadrant's defaults of DNS_DEFAULT_TTL and DNS_DEFAULT_LB_TTL. */
  gatewayTtls: { ttl: 60, loadBalancedTtl: 300 },
} as const;
