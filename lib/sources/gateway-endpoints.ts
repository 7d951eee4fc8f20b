import { createHash } from 'node:crypto';
import { DEFAULTS, type Endpoint, type GatewayTtls, type KuadrantEndpoint } from '../model.js';

/*
 * Kuadrant's endpoint builder (dns-operator pkg/builder), rule for rule: what lbdns builds for a
 * DNSPolicy is the `spec.endpoints` Kuadrant's operator would write into its DNSRecord, so an
 * admin can diff the two (`display`). What lbdns then serves of them is served-endpoints.ts.
 */

export interface LoadBalancing {
  readonly weight: number;
  /** As the policy writes it: set identifiers and geo-codes keep its case, names lower-case it. */
  readonly geo: string;
  readonly defaultGeo: boolean;
}

/** The Gateway the endpoints are for, and the cluster they are built in (the kube-system Namespace's UID). */
export interface BuildTarget {
  readonly name: string;
  readonly namespace: string;
  readonly addresses: readonly Endpoint[];
  /** Undefined until read; only a load-balanced leaf of IP addresses needs it. */
  readonly clusterId: string | undefined;
}

/**
 * The first `length` characters of the base-36 form of sha224(s), a '0' for each leading zero
 * byte (martinlindhe/base36's EncodeBytes, which Kuadrant's hash.ToBase36HashLen uses).
 * By hand: no npm base-36 encoder of a byte string is the same function.
 */
export function shortCode(s: string, length = 6): string {
  const digest = createHash('sha224').update(s).digest();
  const zeros = digest.findIndex((b) => b !== 0);
  const body = BigInt(`0x${digest.toString('hex')}`).toString(36);
  return ('0'.repeat(zeros < 0 ? digest.length : zeros) + body).slice(0, length);
}

/** Thrown when a load-balanced leaf of IP addresses is asked for before the cluster's id is known. */
export class ClusterIdUnknown extends Error {}

const endpoint = (dnsName: string, recordType: KuadrantEndpoint['recordType'], targets: readonly string[], recordTTL: number, setIdentifier = '', providerSpecific: KuadrantEndpoint['providerSpecific'] = []): KuadrantEndpoint => ({
  dnsName,
  recordType,
  targets,
  recordTTL,
  setIdentifier,
  providerSpecific,
});

/**
 * The endpoints of one listener host. Simple (no `loadBalancing`): `host A <every IP>` and
 * `host CNAME <every host name>`. Load-balanced: `host → klb.host → <geo>.klb.host →` each
 * host name address and `<cluster>-<gateway>.klb.host A <every IP>`. Sorted as Kuadrant sorts
 * them, by name and set identifier.
 */
export function buildEndpoints(host: string, target: BuildTarget, loadBalancing: LoadBalancing | undefined, ttls: GatewayTtls = DEFAULTS.gatewayTtls): KuadrantEndpoint[] {
  const ips = target.addresses.flatMap((a) => (a.kind === 'ip' ? [a.ip] : []));
  const hostnames = target.addresses.flatMap((a) => (a.kind === 'hostname' ? [a.hostname] : []));
  const built: KuadrantEndpoint[] = [];
  if (loadBalancing === undefined) {
    if (ips.length > 0) built.push(endpoint(host, 'A', ips, ttls.ttl));
    if (hostnames.length > 0) built.push(endpoint(host, 'CNAME', hostnames, ttls.ttl));
    return built;
  }
  const lb = `klb.${host.startsWith('*') ? host.replaceAll('*.', '') : host}`.toLowerCase();
  const geoLb = `${loadBalancing.geo}.${lb}`.toLowerCase();
  const weighted = [...hostnames];
  if (ips.length > 0) {
    if (target.clusterId === undefined) throw new ClusterIdUnknown('the cluster id (the kube-system Namespace UID) is not known yet');
    const leaf = `${shortCode(target.clusterId)}-${shortCode(`${target.name}-${target.namespace}`)}.${lb}`.toLowerCase();
    built.push(endpoint(leaf, 'A', ips, ttls.ttl));
    weighted.push(leaf);
  }
  for (const value of weighted) built.push(endpoint(geoLb, 'CNAME', [value], ttls.ttl, value, [{ name: 'weight', value: String(loadBalancing.weight) }]));
  if (built.length === 0) return built;
  built.push(endpoint(lb, 'CNAME', [geoLb], ttls.loadBalancedTtl, loadBalancing.geo, [{ name: 'geo-code', value: loadBalancing.geo }]));
  if (loadBalancing.defaultGeo) built.push(endpoint(lb, 'CNAME', [geoLb], ttls.loadBalancedTtl, 'default', [{ name: 'geo-code', value: '*' }]));
  built.push(endpoint(host, 'CNAME', [lb], ttls.loadBalancedTtl));
  const key = (e: KuadrantEndpoint): string => e.dnsName + e.setIdentifier;
  return built.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
