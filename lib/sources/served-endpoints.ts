import { isIP } from 'node:net';
import type { GatewayEndpoint, KuadrantEndpoint } from '../model.js';
import type { Warn } from './untrusted.js';

/*
 * What lbdns serves of the endpoints Kuadrant's builder makes or a Kuadrant DNSRecord holds.
 * Where they are not valid DNS, lbdns serves the valid part and says how (the note): Kuadrant's
 * builder puts IPv6 addresses in an A record, gives a simple host an A and a CNAME when a
 * Gateway has IP and Hostname addresses, and a CNAME every Hostname address.
 */

export interface Served {
  /** Per endpoint given, what is served of it. */
  readonly endpoints: readonly (readonly GatewayEndpoint[])[];
  /** Per endpoint given, how what is served differs from it; undefined when it does not. */
  readonly notes: readonly (string | undefined)[];
}

/**
 * Written out, the optional fields added in one order: an object spread from one whose fields
 * vary gets a hidden class of its own, and at 10,000 Gateway hosts those were 30,000 classes,
 * 6.5 MiB of the monitor's heap (bench/gateway-heap.ts).
 */
function served(e: KuadrantEndpoint, recordType: GatewayEndpoint['recordType'], targets: readonly string[]): GatewayEndpoint {
  const out: { -readonly [K in keyof GatewayEndpoint]: GatewayEndpoint[K] } = { dnsName: e.dnsName, recordType, targets, ttl: e.recordTTL, setIdentifier: e.setIdentifier };
  let weight: string | undefined;
  let geo: string | undefined;
  for (const { name, value } of e.providerSpecific) {
    if (name === 'weight') weight ??= value;
    else if (name === 'geo-code') geo ??= value;
  }
  // As Kuadrant's CoreDNS plugin reads them: a weight makes the endpoint weighted, and its geo code is then not read.
  if (weight !== undefined) out.weight = Number(weight);
  else if (geo !== undefined) out.geo = geo;
  return out;
}

/** Targets are already valid: IP literals (canonical) for A and AAAA, host names for CNAME. */
function servedForm(e: KuadrantEndpoint): { endpoints: GatewayEndpoint[]; note?: string } {
  if (e.recordType === 'CNAME') {
    const first = e.targets[0] as string;
    const endpoints = [served(e, e.recordType, [first])];
    return e.targets.length === 1 ? { endpoints } : { endpoints, note: `a CNAME holds one target: serving the first (${first}) of ${e.targets.length}` };
  }
  const v4 = e.targets.filter((t) => isIP(t) === 4);
  const v6 = e.targets.filter((t) => isIP(t) === 6);
  const endpoints: GatewayEndpoint[] = [];
  if (v4.length > 0) endpoints.push(served(e, 'A', v4));
  if (v6.length > 0) endpoints.push(served(e, 'AAAA', v6));
  if (e.recordType === 'A' && v6.length > 0) return { endpoints, note: `IPv6 addresses in an A record: serving ${v6.join(', ')} as AAAA` };
  if (e.recordType === 'AAAA' && v4.length > 0) return { endpoints, note: `IPv4 addresses in an AAAA record: serving ${v4.join(', ')} as A` };
  return { endpoints };
}

/** One owner's endpoints, as served: a name with addresses and no set identifier drops its CNAME (a name cannot be both). */
export function servedEndpoints(given: readonly KuadrantEndpoint[]): Served {
  const forms = given.map(servedForm);
  const addressed = new Set(given.flatMap((e) => (e.recordType !== 'CNAME' && e.setIdentifier === '' ? [e.dnsName] : [])));
  const notes = forms.map((f) => f.note);
  const endpoints = forms.map((f, i) => {
    const e = given[i] as KuadrantEndpoint;
    if (e.recordType !== 'CNAME' || e.setIdentifier !== '' || !addressed.has(e.dnsName)) return f.endpoints;
    notes[i] = `${e.dnsName} also has address records, and a CNAME cannot share a name: not served (the addresses are)`;
    return [];
  });
  return { endpoints, notes };
}

/** servedEndpoints, each note a warning naming `where` and the endpoint. */
export function servedWithWarnings(given: readonly KuadrantEndpoint[], where: string, warn: Warn): GatewayEndpoint[] {
  const { endpoints, notes } = servedEndpoints(given);
  notes.forEach((note, i) => {
    if (note === undefined) return;
    const e = given[i] as KuadrantEndpoint;
    warn(`${where}: endpoint ${e.dnsName} ${e.recordType}: ${note}`, { where, dnsName: e.dnsName, recordType: e.recordType, reason: note });
  });
  return endpoints.flat();
}
