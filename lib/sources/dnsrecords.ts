import type { SourceContribution } from './cluster-data.js';
import { ipFamily } from '../grammar/ip.js';
import type { Endpoint, ExtraRecord } from '../model.js';
import { validateDnsName } from '../grammar/validate.js';
import {
  describeObject,
  distinctCapped,
  elementsOf,
  endpointFromApi,
  endpointKey,
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
  };
}

/*
 * A Kubernetes object name (RFC 1123 subdomain). The source ends up in a Corefile comment,
 * so namespace and name are checked rather than trusted to have passed the API server.
 */
const OBJECT_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

/** The CRD's default, applied by the API server when the field is left out. */
const DEFAULT_POLICY = 'Managed';

function sourceOf(record: DNSRecord, object: string, warn: Warn): string | undefined {
  const { namespace, name } = record.metadata ?? {};
  if (typeof namespace !== 'string' || !OBJECT_NAME.test(namespace) || typeof name !== 'string' || !OBJECT_NAME.test(name)) {
    warnIgnored(warn, `${object} metadata`, { namespace, name }, 'is not a valid namespace and name', 'record not served');
    return undefined;
  }
  return `dnsrecord/${namespace}/${name}`;
}

function nameOf(record: DNSRecord, object: string, warn: Warn): string | undefined {
  const where = `${object} spec.dnsName`;
  const value = record.spec?.dnsName;
  return validated(where, value, warn, () => validateDnsName(where, value, { allowWildcard: true, minLabels: 2 }), 'record not served');
}

/**
 * Why the cluster's CoreDNS must not serve `name` for a DNSRecord, or undefined when it may.
 * Every node resolves through that CoreDNS, so a record outside the cluster domain would
 * take over a name of the wider world for the whole cluster, and one for api or api-int
 * would redirect the API; ingress DNSRecords only ever name names under the domain.
 */
function outOfScope(name: string, domain: string): string | undefined {
  const body = name.startsWith('*.') ? name.slice(2) : name;
  if (body !== domain && !body.endsWith(`.${domain}`)) return `is outside the cluster domain ${domain}`;
  const api = [`api.${domain}`, `api-int.${domain}`];
  if (api.includes(name)) return `is one of the cluster's API names (${api.join(', ')}), which only the API LBs answer for`;
  if (name === `*.${domain}`) return `is a wildcard covering the cluster's API names (${api.join(', ')}), which only the API LBs answer for`;
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
 * (repeats dropped, at most 16) and its source lists each record. `recordTTL` is not used:
 * lbdns serves every name with its own TTL.
 */
export function dnsRecordsContribution(records: readonly DNSRecord[], warn: Warn, domain: string): SourceContribution {
  const managed = new Map<string, { targets: Located<Endpoint>[]; sources: string[] }>();
  const unmanaged: { name: string; source: string }[] = [];
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
    if (policy === 'Unmanaged') {
      unmanaged.push({ name, source });
      continue;
    }
    const refused = outOfScope(name, domain);
    if (refused !== undefined) {
      warnIgnored(warn, `${object} spec.dnsName`, record.spec?.dnsName, refused, 'record not served');
      continue;
    }
    const targets = targetsOf(record, object, warn);
    if (targets === undefined) continue;
    const entry = managed.get(name);
    if (entry) {
      entry.targets.push(...targets);
      entry.sources.push(source);
    } else {
      managed.set(name, { targets, sources: [source] });
    }
  }
  const extraRecords: ExtraRecord[] = [...managed].map(([name, { targets, sources }]) => {
    const source = sources.join(', ');
    return { name, targets: distinctCapped(targets, endpointKey, `${source} spec.targets`, warn), source };
  });
  return { extraRecords: extraRecords.sort(byName), unmanaged: unmanaged.sort(byName) };
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
