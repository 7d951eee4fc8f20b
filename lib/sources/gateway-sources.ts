import type { SourceContribution } from './cluster-data.js';
import { dnsPolicyEndpoints, type DNSPolicy } from './dnspolicies.js';
import { DEFAULTS, type GatewayTtls } from '../model.js';
import { gatewayView, type Gateway } from './gateways.js';
import { kuadrantRecordEndpoints, ZONE_LABEL, type KuadrantDNSRecord } from './kuadrant-dnsrecords.js';
import { derive, perObject, replay, type Derived } from './per-object.js';
import type { Warn } from './untrusted.js';

export type GatewayKind = 'dnsrecords' | 'gateways' | 'dnspolicies' | 'cluster-id';

/**
 * The collections Gateway DNS reads, with the API paths and what RBAC must allow. The
 * kube-system Namespace is the cluster's id, as Kuadrant's: its UID names the leaf of a
 * load-balanced Gateway's addresses.
 */
export const GATEWAY_COLLECTIONS: readonly { readonly kind: GatewayKind; readonly path: string; readonly what: string; readonly fieldSelector?: string }[] = [
  { kind: 'dnsrecords', path: '/apis/kuadrant.io/v1alpha1/dnsrecords', what: 'list dnsrecords.kuadrant.io in all namespaces' },
  { kind: 'gateways', path: '/apis/gateway.networking.k8s.io/v1/gateways', what: 'list gateways.gateway.networking.k8s.io in all namespaces' },
  { kind: 'dnspolicies', path: '/apis/kuadrant.io/v1/dnspolicies', what: 'list dnspolicies.kuadrant.io in all namespaces' },
  { kind: 'cluster-id', path: '/api/v1/namespaces', what: 'list namespace kube-system', fieldSelector: 'metadata.name=kube-system' },
];

/** Only the DNSRecords Kuadrant handed to a CoreDNS provider for one of our zones are listed at all. */
export function zoneLabelSelector(zones: readonly string[]): string {
  return `${ZONE_LABEL} in (${zones.join(',')})`;
}

const gatewayViewOf = perObject(gatewayView);

/**
 * The collections make one contribution: a DNSPolicy means nothing without its Gateway,
 * and a Kuadrant DNSRecord for a listener replaces what lbdns would build for it. Each
 * collection hands its objects in; the contribution is computed once per change, when read,
 * from views kept per object (and the Kuadrant records kept until that collection changes).
 */
export class GatewayInputs {
  private readonly items: Record<GatewayKind, unknown[]> = { dnsrecords: [], gateways: [], dnspolicies: [], 'cluster-id': [] };
  private cached: SourceContribution | undefined;
  private kuadrant: Derived<ReturnType<typeof kuadrantRecordEndpoints>> | undefined;

  constructor(
    private readonly zones: readonly string[],
    private readonly warnings: { readonly warn: Warn; flush(): void },
    private readonly ttls: GatewayTtls = DEFAULTS.gatewayTtls,
  ) {}

  set(kind: GatewayKind, items: readonly unknown[]): void {
    this.items[kind] = [...items];
    this.cached = undefined;
    if (kind === 'dnsrecords') this.kuadrant = undefined;
  }

  contribution(): SourceContribution {
    if (this.cached === undefined) {
      const { warn } = this.warnings;
      this.kuadrant ??= derive((w) => kuadrantRecordEndpoints(this.items.dnsrecords as KuadrantDNSRecord[], this.zones, w));
      const kuadrant = replay(this.kuadrant, warn);
      const gateways = (this.items.gateways as Gateway[]).flatMap((g) => gatewayViewOf(g, warn) ?? []);
      const uid = (this.items['cluster-id'][0] as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
      const clusterId = typeof uid === 'string' && uid !== '' ? uid : undefined;
      const built = dnsPolicyEndpoints({ policies: this.items.dnspolicies as DNSPolicy[], gateways, zones: this.zones, kuadrantHosts: kuadrant.rootHosts, clusterId, ttls: this.ttls }, warn);
      this.warnings.flush();
      this.cached = { gatewayOwners: [...kuadrant.owners, ...built] };
    }
    return this.cached;
  }
}
