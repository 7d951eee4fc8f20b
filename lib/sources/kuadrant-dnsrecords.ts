import type { GatewayRecordType, InvolvedObject, KuadrantEndpoint, OwnedEndpoints } from '../model.js';
import { validateDnsName, validateGeoCode, validateIntInRange, validateWeight } from '../grammar/validate.js';
import { DEFAULTS, LIMITS } from '../model.js';
import { servedWithWarnings } from './served-endpoints.js';
import { describeObject, distinctCapped, elementsOf, endpointFromApi, identityOf, objectRef, objectWarn, onObject, validated, warnIgnored, type ApiObjectMeta, type Located, type ObjectIdentity, type Warn } from './untrusted.js';

/** The label Kuadrant's dns-operator puts on each DNSRecord it hands to a CoreDNS provider. */
export const ZONE_LABEL = 'kuadrant.io/coredns-zone-name';

/** `dnsrecords.kuadrant.io` v1alpha1 as far as lbdns reads it; every field may be missing. */
export interface KuadrantDNSRecord {
  readonly metadata?: ApiObjectMeta & { readonly creationTimestamp?: unknown; readonly labels?: Record<string, unknown> };
  readonly spec?: { readonly rootHost?: unknown; readonly endpoints?: unknown };
}

interface RawEndpoint {
  readonly dnsName?: unknown;
  readonly recordType?: unknown;
  readonly targets?: unknown;
  readonly recordTTL?: unknown;
  readonly setIdentifier?: unknown;
  readonly providerSpecific?: unknown;
}

/** Targets that fit the type's kind: IP literals (either family) for A and AAAA, host names for CNAME. */
function targetsOf(type: GatewayRecordType, raw: RawEndpoint, where: string, warn: Warn): string[] | undefined {
  const found = elementsOf(raw.targets, `${where}.targets`, warn).flatMap(({ item, where: at }): Located<string>[] => {
    const endpoint = endpointFromApi(item, at, warn);
    if (endpoint === undefined) return [];
    if ((type === 'CNAME') !== (endpoint.kind === 'hostname')) {
      warnIgnored(warn, at, item, `does not fit a ${type} record`);
      return [];
    }
    return [{ item: endpoint.kind === 'ip' ? endpoint.ip : endpoint.hostname, where: at }];
  });
  const targets = distinctCapped(found, (t) => t, `${where}.targets`, warn);
  if (targets.length === 0) {
    warnIgnored(warn, `${where}.targets`, raw.targets, 'holds no usable target', 'endpoint not served');
    return undefined;
  }
  return targets;
}

function providerSpecificOf(raw: RawEndpoint, where: string, warn: Warn): KuadrantEndpoint['providerSpecific'] | undefined {
  const out: { name: string; value: string }[] = [];
  for (const { item, where: at } of elementsOf(raw.providerSpecific, `${where}.providerSpecific`, warn)) {
    const { name, value } = (item ?? {}) as { name?: unknown; value?: unknown };
    if (name === 'weight') {
      const weight = validated(`${at}.value`, value, warn, () => validateWeight(`${at}.value`, value), 'endpoint not served');
      if (weight === undefined) return undefined;
      out.push({ name, value: String(weight) });
    } else if (name === 'geo-code') {
      const geo = validated(`${at}.value`, value, warn, () => validateGeoCode(`${at}.value`, value), 'endpoint not served');
      if (geo === undefined) return undefined;
      out.push({ name, value: geo });
    }
  }
  return out;
}

function endpointOf(item: unknown, where: string, warn: Warn): KuadrantEndpoint | undefined {
  if (typeof item !== 'object' || item === null) {
    warnIgnored(warn, where, item, 'is not an endpoint');
    return undefined;
  }
  const raw = item as RawEndpoint;
  const dnsName = validated(`${where}.dnsName`, raw.dnsName, warn, () => validateDnsName(`${where}.dnsName`, raw.dnsName, { allowWildcard: true, minLabels: 2 }), 'endpoint not served');
  if (dnsName === undefined) return undefined;
  const type = raw.recordType;
  if (type !== 'A' && type !== 'AAAA' && type !== 'CNAME') {
    warnIgnored(warn, `${where}.recordType`, type, 'is not A, AAAA or CNAME', 'endpoint not served');
    return undefined;
  }
  // The CRD's int64: a string of digits is no TTL from the API, whatever the flags' grammar takes.
  if (raw.recordTTL !== undefined && typeof raw.recordTTL !== 'number') {
    warnIgnored(warn, `${where}.recordTTL`, raw.recordTTL, 'is not a number', 'endpoint not served');
    return undefined;
  }
  const ttl = raw.recordTTL === undefined || raw.recordTTL === 0 ? DEFAULTS.gatewayTtls.ttl : validated(`${where}.recordTTL`, raw.recordTTL, warn, () => validateIntInRange(`${where}.recordTTL`, raw.recordTTL, LIMITS.minTtl, LIMITS.maxTtl), 'endpoint not served');
  if (ttl === undefined) return undefined;
  const setIdentifier = raw.setIdentifier ?? '';
  if (typeof setIdentifier !== 'string' || !/^[A-Za-z0-9*._-]{0,253}$/.test(setIdentifier)) {
    warnIgnored(warn, `${where}.setIdentifier`, setIdentifier, 'is not a set identifier', 'endpoint not served');
    return undefined;
  }
  const targets = targetsOf(type, raw, where, warn);
  const providerSpecific = providerSpecificOf(raw, where, warn);
  if (targets === undefined || providerSpecific === undefined) return undefined;
  return { dnsName, recordType: type, targets, recordTTL: ttl, setIdentifier, providerSpecific };
}

/**
 * Every labelled Kuadrant DNSRecord whose label names one of `zones`, as one owner: its
 * valid endpoints (bad ones skipped with a warning). `rootHosts` collects `NAMESPACE/ROOTHOST`
 * so lbdns does not build again what Kuadrant already built for a DNSPolicy.
 */
export function kuadrantRecordEndpoints(records: readonly KuadrantDNSRecord[], zones: readonly string[], warn: Warn): { owners: OwnedEndpoints[]; rootHosts: Set<string> } {
  const owners: OwnedEndpoints[] = [];
  const rootHosts = new Set<string>();
  for (const record of records) {
    const one = objectWarn(warn);
    const owner = recordOwner(record, zones, one.warn, rootHosts);
    one.done();
    if (owner !== undefined) owners.push(owner);
  }
  return { owners, rootHosts };
}

/** One record's endpoints, its root host added to `rootHosts`. */
function recordOwner(record: KuadrantDNSRecord, zones: readonly string[], warn: Warn, rootHosts: Set<string>): OwnedEndpoints | undefined {
  // One being deleted is served until it is gone, as Kuadrant's plugin serves every record its informer holds.
  if (typeof record !== 'object' || record === null) return undefined;
  const object = describeObject('dnsrecord.kuadrant.io', record.metadata);
  const zone = record.metadata?.labels?.[ZONE_LABEL];
  if (typeof zone !== 'string' || !zones.includes(zone)) return undefined;
  const id = identityOf(record.metadata, object, warn, 'record not served');
  if (id === undefined) return undefined;
  const about = objectRef('kuadrant.io/v1alpha1', 'DNSRecord', id);
  return validRecordOwner(record, id, object, zone, about, onObject(warn, about), rootHosts);
}

/** Events about a record go to it, in its namespace: its tenant is the one to act. */
function validRecordOwner(record: KuadrantDNSRecord, id: ObjectIdentity, object: string, zone: string, about: InvolvedObject, warn: Warn, rootHosts: Set<string>): OwnedEndpoints | undefined {
  const root = record.spec?.rootHost;
  if (typeof root === 'string') rootHosts.add(`${id.namespace}/${root.toLowerCase().replace(/\.$/, '')}`);
  const given = elementsOf(record.spec?.endpoints, `${object} spec.endpoints`, warn).flatMap(({ item, where }) => endpointOf(item, where, warn) ?? []);
  const endpoints = servedWithWarnings(given, object, warn);
  if (endpoints.length === 0) return undefined;
  return { source: `dnsrecord.kuadrant.io/${id.namespace}/${id.name}`, namespace: id.namespace, created: id.created, zone, endpoints, regarding: about };
}
