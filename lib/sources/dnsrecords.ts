import type { SourceContribution } from './cluster-data.js';
import { ipFamily } from '../grammar/ip.js';
import { LIMITS, type Endpoint, type ExtraRecord } from '../model.js';
import { validateDnsName } from '../grammar/validate.js';
import {
  describeObject,
  distinctCapped,
  elementsOf,
  endpointFromApi,
  endpointKey,
  identityOf,
  validated,
  warnIgnored,
  type ApiObjectMeta,
  type Located,
  type Warn,
} from './untrusted.js';

/** `dnsrecords.ingress.operator.openshift.io` as far as lbdns reads it; every field may be missing. */
export interface DNSRecord {
  readonly metadata?: ApiObjectMeta;
  readonly spec?: {
    readonly dnsName?: unknown;
    readonly targets?: unknown;
    readonly recordType?: unknown;
    readonly dnsManagementPolicy?: unknown;
    readonly recordTTL?: unknown;
  };
}

/** The CRD's default, applied by the API server when the field is left out. */
const DEFAULT_POLICY = 'Managed';

/** What the ingress operator uses for `recordTTL: 0` (the CRD: "If zero, the default is 30"). */
const ZERO_TTL_MEANS = 30;

/** `spec.recordTTL`, or undefined (the record is served at lbdns's own TTL) when absent or unusable. */
function ttlOf(record: DNSRecord, object: string, warn: Warn): number | undefined {
  const value = record.spec?.recordTTL;
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    warnIgnored(warn, `${object} spec.recordTTL`, value, 'is not a whole number of seconds', "served at lbdns's TTL");
    return undefined;
  }
  if (value > LIMITS.maxTtl) {
    warnIgnored(warn, `${object} spec.recordTTL`, value, `is more than ${LIMITS.maxTtl} s, the most CoreDNS's hosts and lbdns serve`, "served at lbdns's TTL");
    return undefined;
  }
  return value === 0 ? ZERO_TTL_MEANS : value;
}

/** The source ends up in a Corefile comment, so namespace and name are checked rather than trusted to have passed the API server. */
function sourceOf(record: DNSRecord, object: string, warn: Warn): string | undefined {
  const id = identityOf(record.metadata, object, warn, 'record not served');
  return id === undefined ? undefined : `dnsrecord/${id.namespace}/${id.name}`;
}

function nameOf(record: DNSRecord, object: string, warn: Warn): string | undefined {
  const where = `${object} spec.dnsName`;
  const value = record.spec?.dnsName;
  return validated(where, value, warn, () => validateDnsName(where, value, { allowWildcard: true, minLabels: 2 }), 'record not served');
}

/** Why a DNSRecord may not have its name, with the `refusal` label of lbdns_names_refused_total. */
interface NameClaim {
  readonly refusal: 'outside-domain' | 'api-name';
  readonly reason: string;
}

/**
 * Why the cluster's CoreDNS must not serve `name` for a DNSRecord, or undefined when it may.
 * Every node resolves through that CoreDNS, so a record outside the cluster domain would
 * take over a name of the wider world for the whole cluster, and one for api or api-int
 * would redirect the API; ingress DNSRecords only ever name names under the domain.
 */
function outOfScope(name: string, domain: string): NameClaim | undefined {
  const body = name.startsWith('*.') ? name.slice(2) : name;
  if (body !== domain && !body.endsWith(`.${domain}`)) return { refusal: 'outside-domain', reason: `is outside the cluster domain ${domain}` };
  return apiNameClaim(name, domain);
}

/** A claim on the cluster's API names or on the domain's apex (its SOA, NS and the rest stay the domain's DNS's), for Unmanaged records too: the admin is given them. */
function apiNameClaim(name: string, domain: string): NameClaim | undefined {
  if (name === domain) return { refusal: 'outside-domain', reason: `is the cluster domain itself, whose apex records (SOA, NS) are the domain's DNS's` };
  const body = name.startsWith('*.') ? name.slice(2) : name;
  if (domain.endsWith(`.${body}`)) return { refusal: 'outside-domain', reason: `is ${name === body ? 'a parent of' : 'a wildcard over'} the cluster domain ${domain}, whose names are not the cluster's to give` };
  const api = [`api.${domain}`, `api-int.${domain}`];
  if (api.includes(name)) return { refusal: 'api-name', reason: `is one of the cluster's API names (${api.join(', ')}), which only the API LBs answer for` };
  if (name === `*.${domain}`) return { refusal: 'api-name', reason: `is a wildcard covering the cluster's API names (${api.join(', ')}), which only the API LBs answer for` };
  return undefined;
}

/** A target of the wrong kind for the record type is dropped, the record's other targets kept. */
function targetOf(recordType: 'A' | 'CNAME', item: unknown, where: string, warn: Warn): Endpoint | undefined {
  const endpoint = endpointFromApi(item, where, warn);
  if (endpoint === undefined) return undefined;
  if (recordType === 'A' && endpoint.kind === 'hostname') {
    warnIgnored(warn, where, item, 'is a host name in an A record, which needs IPv4 addresses');
    return undefined;
  }
  if (recordType === 'A' && endpoint.kind === 'ip' && ipFamily(endpoint.ip) === 6) {
    warnIgnored(warn, where, item, 'is an IPv6 address in an A record, which needs IPv4 addresses');
    return undefined;
  }
  if (recordType === 'CNAME' && endpoint.kind === 'ip') {
    warnIgnored(warn, where, item, 'is an IP address in a CNAME record, which needs a host name');
    return undefined;
  }
  return endpoint;
}

function targetsOf(record: DNSRecord, object: string, warn: Warn): Located<Endpoint>[] | undefined {
  const recordType = record.spec?.recordType;
  if (recordType !== 'A' && recordType !== 'CNAME') {
    warnIgnored(warn, `${object} spec.recordType`, recordType, 'is not A or CNAME', 'record not served');
    return undefined;
  }
  const where = `${object} spec.targets`;
  const targets = elementsOf(record.spec?.targets, where, warn).flatMap(({ item, where: at }) => {
    const endpoint = targetOf(recordType, item, at, warn);
    return endpoint === undefined ? [] : [{ item: endpoint, where: at }];
  });
  if (targets.length === 0) {
    warnIgnored(warn, where, record.spec?.targets, 'holds no usable target', 'record not served');
    return undefined;
  }
  return targets;
}

/**
 * Names to serve from DNSRecords. `Managed` ones (the CRD's default) become extra records
 * when their name lies within `domain` (the cluster's, lower case, no trailing dot) and is
 * not an API name: A targets as IPv4 endpoints, CNAME targets as host names lbdns resolves
 * itself, so a CNAME is served as the addresses it leads to. `Unmanaged` ones are left to the admin and
 * only reported; a record being deleted is neither. Records naming the same DNS name are
 * merged, not one chosen: a name has one answer set, so it carries all their targets
 * (repeats dropped, at most 16) and its source lists each record. Each is served at its
 * `recordTTL` (the shortest, when records share a name), as the ingress operator publishes it.
 */
export function dnsRecordsContribution(records: readonly DNSRecord[], warn: Warn, domain: string): SourceContribution {
  const managed = new Map<string, { targets: Located<Endpoint>[]; sources: string[]; ttl: number | undefined }>();
  const unmanaged: ExtraRecord[] = [];
  for (const record of records) {
    if (typeof record !== 'object' || record === null) {
      warnIgnored(warn, 'dnsrecord list item', record, 'is not an object');
      continue;
    }
    const object = describeObject('dnsrecord', record.metadata);
    if (record.metadata?.deletionTimestamp) continue;
    const source = sourceOf(record, object, warn);
    if (source === undefined) continue;
    const policy = record.spec?.dnsManagementPolicy ?? DEFAULT_POLICY;
    if (policy !== 'Managed' && policy !== 'Unmanaged') {
      warnIgnored(warn, `${object} spec.dnsManagementPolicy`, policy, 'is not Managed or Unmanaged', 'record not served');
      continue;
    }
    const name = nameOf(record, object, warn);
    if (name === undefined) continue;
    const ttl = ttlOf(record, object, warn);
    if (policy === 'Unmanaged') {
      const claim = apiNameClaim(name, domain);
      if (claim !== undefined) {
        warnIgnored(warn, `${object} spec.dnsName`, record.spec?.dnsName, claim.reason, 'record not reported', { refusal: claim.refusal });
        continue;
      }
      // Reported with what the admin's DNS must hold; a target lbdns could not vouch for is left out.
      const targets = targetsOf(record, object, warn) ?? [];
      unmanaged.push({ name, source, targets: targets.map((t) => t.item), ...(ttl === undefined ? {} : { ttl }) });
      continue;
    }
    const refused = outOfScope(name, domain);
    if (refused !== undefined) {
      warnIgnored(warn, `${object} spec.dnsName`, record.spec?.dnsName, refused.reason, 'record not served', { refusal: refused.refusal });
      continue;
    }
    const targets = targetsOf(record, object, warn);
    if (targets === undefined) continue;
    const entry = managed.get(name);
    if (entry) {
      entry.targets.push(...targets);
      entry.sources.push(source);
      // One answer set has one TTL: the shortest, so no record is cached longer than its owner asked.
      if (ttl !== undefined) entry.ttl = entry.ttl === undefined ? ttl : Math.min(entry.ttl, ttl);
    } else {
      managed.set(name, { targets, sources: [source], ttl });
    }
  }
  const extraRecords: ExtraRecord[] = [...managed].map(([name, { targets, sources, ttl }]) => {
    const source = sources.join(', ');
    return { name, targets: distinctCapped(targets, endpointKey, `${source} spec.targets`, warn), source, ...(ttl === undefined ? {} : { ttl }) };
  });
  return { extraRecords: extraRecords.sort(byName), unmanaged: unmanaged.sort(byName) };
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** What lbdns does with each DNSRecord, as the monitor reports it. */
function dnsRecordDecisions(c: SourceContribution, clusterTtl: number): Map<string, Record<string, unknown>> {
  const decisions = new Map<string, Record<string, unknown>>();
  for (const r of c.extraRecords ?? []) {
    for (const source of r.source.split(', ')) decisions.set(source, { dnsRecord: source, name: r.name, policy: 'Managed', action: 'served by this CoreDNS', ttl: r.ttl ?? clusterTtl });
  }
  for (const r of c.unmanaged ?? []) {
    decisions.set(r.source, { dnsRecord: r.source, name: r.name, policy: 'Unmanaged', action: "not served: the admin's DNS must hold it (lbdns print-records --names dnsrecords)" });
  }
  return decisions;
}

/**
 * Logs each DNSRecord's policy and what lbdns does with it once, and again only when that
 * changes: records the ingress operator skips (Unmanaged) are the admin's to create.
 */
export function dnsRecordPolicyLog(log: (msg: string, fields: Record<string, unknown>) => void, clusterTtl: number): (c: SourceContribution) => void {
  let last = new Map<string, string>();
  return (c) => {
    const now = new Map([...dnsRecordDecisions(c, clusterTtl)].map(([source, fields]) => [source, JSON.stringify(fields)]));
    for (const [source, text] of now) if (last.get(source) !== text) log('DNSRecord policy', JSON.parse(text) as Record<string, unknown>);
    for (const source of last.keys()) if (!now.has(source)) log('DNSRecord no longer listed or no longer usable', { dnsRecord: source });
    last = now;
  };
}