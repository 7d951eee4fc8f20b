import { createHash } from 'node:crypto';
import { ipFamily } from '../grammar/ip.js';
import type { Endpoint, GatewayEndpoint } from '../model.js';

/*
 * The endpoints Kuadrant's operator writes into a DNSRecord for one Gateway listener host, so
 * that what lbdns serves for a DNSPolicy is the same whether Kuadrant or lbdns built the
 * record (the Kuadrant DNSRecord source reads the same shape from `spec.endpoints`).
 */

/** Kuadrant's TTLs: simple records and the load-balanced leaves 60 s, the CNAMEs above them 300 s. */
export const TTL = { simple: 60, leaf: 60, loadBalanced: 300 } as const;

export interface LoadBalancing {
  readonly weight: number;
  /** Validated geo code, upper case. */
  readonly geo: string;
  readonly defaultGeo: boolean;
}

/**
 * The leaf label of one Gateway under `klb.<host>`: a short stable hash of the Gateway, as
 * Kuadrant's `<cluster>-<gateway>` hash label, so two Gateways sharing a host get their own leaf.
 */
export function leafLabel(gatewayNamespace: string, gatewayName: string): string {
  return createHash('sha256').update(`${gatewayNamespace}/${gatewayName}`).digest('hex').slice(0, 12);
}

/**
 * `*.x` → `klb.x`; `app.x` → `klb.app.x`. The names below a host are joined, not templates:
 * they are map keys, and a concatenation hashed is kept along with its flat copy.
 */
export function klbName(host: string): string {
  return ['klb', host.startsWith('*.') ? host.slice(2) : host].join('.');
}

/** The addresses by family, once per address list: a Gateway's hosts share one list, and their endpoints its arrays. */
const families = new WeakMap<readonly Endpoint[], { readonly v4: readonly string[]; readonly v6: readonly string[]; readonly hostname: string | undefined }>();

function familiesOf(addresses: readonly Endpoint[]) {
  let kept = families.get(addresses);
  if (kept === undefined) {
    const ips = addresses.flatMap((a) => (a.kind === 'ip' ? [a.ip] : []));
    const hostname = addresses.find((a) => a.kind === 'hostname');
    // Exact-size copies (slice): filter's arrays keep room for 17.
    kept = { v4: ips.filter((ip) => ipFamily(ip) === 4).slice(), v6: ips.filter((ip) => ipFamily(ip) === 6).slice(), hostname: hostname?.kind === 'hostname' ? hostname.hostname : undefined };
    families.set(addresses, kept);
  }
  return kept;
}

function addressEndpoints(dnsName: string, addresses: readonly Endpoint[], ttl: number): GatewayEndpoint[] {
  const { v4, v6, hostname } = familiesOf(addresses);
  // Object literals, not spreads of a base: 25,000 endpoints, and a spread copy is four times the size (bench/heap-shapes.ts).
  if (v4.length === 0 && v6.length === 0) {
    // A CNAME carries one target; the builder's caller has already kept only the first host name.
    return hostname === undefined ? [] : [{ dnsName, ttl, setIdentifier: '', recordType: 'CNAME', targets: [hostname] }];
  }
  const a: GatewayEndpoint = { dnsName, ttl, setIdentifier: '', recordType: 'A', targets: v4 };
  const aaaa: GatewayEndpoint = { dnsName, ttl, setIdentifier: '', recordType: 'AAAA', targets: v6 };
  return v6.length === 0 ? [a] : v4.length === 0 ? [aaaa] : [a, aaaa];
}

/**
 * One listener host's endpoints. `addresses` are the Gateway's validated addresses minus the
 * policy's exclusions; IP addresses win over host names (a name cannot be both A and CNAME).
 * Without `loadBalancing` (Kuadrant's `simple` strategy) the host answers them directly; with
 * it, the chain host → klb.host → <geo>.klb.host → <leaf>.klb.host → addresses.
 */
export function listenerEndpoints(host: string, addresses: readonly Endpoint[], loadBalancing: LoadBalancing | undefined, leaf: string): GatewayEndpoint[] {
  if (loadBalancing === undefined) return addressEndpoints(host, addresses, TTL.simple);
  const klb = klbName(host);
  const geoName = [loadBalancing.geo.toLowerCase(), klb].join('.');
  const leafName = [leaf, klb].join('.');
  const leafRecords = addressEndpoints(leafName, addresses, TTL.leaf);
  if (leafRecords.length === 0) return [];
  const geoRecord = (setIdentifier: string, geo: string): GatewayEndpoint => ({ dnsName: klb, recordType: 'CNAME', targets: [geoName], ttl: TTL.loadBalanced, setIdentifier, geo });
  // concat, not spreads: its array is exactly as long as the endpoints, and a listener keeps it.
  return [
    { dnsName: host, recordType: 'CNAME', targets: [klb], ttl: TTL.loadBalanced, setIdentifier: '' } as GatewayEndpoint,
    geoRecord(loadBalancing.geo, loadBalancing.geo),
  ].concat(
    loadBalancing.defaultGeo ? [geoRecord('default', '*')] : [],
    [{ dnsName: geoName, recordType: 'CNAME', targets: [leafName], ttl: TTL.leaf, setIdentifier: leafName, weight: loadBalancing.weight }],
    leafRecords,
  );
}
