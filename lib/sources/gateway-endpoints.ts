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

/** `*.x` → `klb.x`; `app.x` → `klb.app.x`. */
export function klbName(host: string): string {
  return `klb.${host.startsWith('*.') ? host.slice(2) : host}`;
}

function addressEndpoints(dnsName: string, addresses: readonly Endpoint[], ttl: number, extra: Partial<GatewayEndpoint> = {}): GatewayEndpoint[] {
  const ips = addresses.flatMap((a) => (a.kind === 'ip' ? [a.ip] : []));
  const v4 = ips.filter((ip) => ipFamily(ip) === 4);
  const v6 = ips.filter((ip) => ipFamily(ip) === 6);
  const base = { dnsName, ttl, setIdentifier: '', ...extra };
  if (ips.length === 0) {
    // A CNAME carries one target; the builder's caller has already kept only the first host name.
    const hostname = addresses.find((a) => a.kind === 'hostname');
    return hostname?.kind === 'hostname' ? [{ ...base, recordType: 'CNAME', targets: [hostname.hostname] }] : [];
  }
  return [
    ...(v4.length > 0 ? [{ ...base, recordType: 'A' as const, targets: v4 }] : []),
    ...(v6.length > 0 ? [{ ...base, recordType: 'AAAA' as const, targets: v6 }] : []),
  ];
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
  const geoName = `${loadBalancing.geo.toLowerCase()}.${klb}`;
  const leafName = `${leaf}.${klb}`;
  const leafRecords = addressEndpoints(leafName, addresses, TTL.leaf);
  if (leafRecords.length === 0) return [];
  const geoRecord = (setIdentifier: string, geo: string): GatewayEndpoint => ({ dnsName: klb, recordType: 'CNAME', targets: [geoName], ttl: TTL.loadBalanced, setIdentifier, geo });
  return [
    { dnsName: host, recordType: 'CNAME', targets: [klb], ttl: TTL.loadBalanced, setIdentifier: '' },
    geoRecord(loadBalancing.geo, loadBalancing.geo),
    ...(loadBalancing.defaultGeo ? [geoRecord('default', '*')] : []),
    { dnsName: geoName, recordType: 'CNAME', targets: [leafName], ttl: TTL.leaf, setIdentifier: leafName, weight: loadBalancing.weight },
    ...leafRecords,
  ];
}
