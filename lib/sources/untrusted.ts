import { ECHO_LIMIT, quote, ValidationError } from '../errors.js';
import { LIMITS, type Endpoint, type InvolvedObject } from '../model.js';
import { parseEndpoint, validateIp } from '../grammar/validate.js';

/*
 * Everything read from the Kubernetes API is untrusted input: the server accepts empty
 * entries, duplicates and (outside the few CRD-validated fields) any string. A bad value
 * never fails a whole source; it is dropped with a warning that names the object and the
 * field, so an admin can find it with `oc get`.
 */

export type Warn = (msg: string, fields: Record<string, unknown>) => void;

/** The metadata fields the sources read; typed loosely because custom resources arrive as plain JSON. */
export interface ApiObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly deletionTimestamp?: string | Date | null;
}

/** A validated object as an Event's involved object (`regarding` in a warning's fields): its tenant is the one to act. */
export function objectRef(apiVersion: string, kind: string, id: ObjectIdentity): InvolvedObject {
  return { apiVersion, kind, namespace: id.namespace, name: id.name, ...(id.uid === undefined ? {} : { uid: id.uid }) };
}

/** A warning about one object, carrying it as the Event's involved object. */
export const onObject = (warn: Warn, about: InvolvedObject): Warn => (msg, fields) => warn(msg, { ...fields, regarding: about });

/** `service openshift-ingress/router-default`, as a warning names an object. */
export function describeObject(kind: string, metadata: ApiObjectMeta | undefined): string {
  const name = metadata?.name ?? '<unnamed>';
  return metadata?.namespace ? `${kind} ${metadata.namespace}/${name}` : `${kind} ${name}`;
}

/** A log line carries the value itself, unless it is too long to read: then what a message shows of it. */
function logged(value: unknown): unknown {
  const shown = quote(value);
  return shown.length > ECHO_LIMIT + 2 ? shown : value;
}

/** `outcome` tells the admin what was left out because of it: the value, a record, a node. */
export function warnIgnored(warn: Warn, where: string, value: unknown, reason: string, outcome = 'ignored', more: Readonly<Record<string, unknown>> = {}): void {
  warn(`${where}: ${value === undefined ? '' : `${quote(value)} `}${reason}; ${outcome}`, { where, value: logged(value), reason, ...more });
}

/**
 * The warnings passed on about one object's data: a tenant's object of 1.5 MB can hold 100,000
 * bad entries, each a warning kept with the object and logged, which would fill the monitor's
 * memory and the log. The first few are passed on, then one count of the rest.
 */
const MAX_OBJECT_WARNINGS = 16;

export function objectWarn(warn: Warn): { readonly warn: Warn; done(): void } {
  let passed = 0;
  let more = 0;
  let first: Readonly<Record<string, unknown>> = {};
  return {
    warn: (msg, fields) => {
      if (passed < MAX_OBJECT_WARNINGS) {
        passed += 1;
        warn(msg, fields);
      } else if (more++ === 0) first = fields;
    },
    done: () => {
      if (more === 0) return;
      const where = typeof first.where === 'string' ? first.where : 'an object';
      warn(`${where} and on: ${more} more warnings about the same object, not shown`, { where: `${where} and on`, more, ...(first.regarding === undefined ? {} : { regarding: first.regarding }) });
    },
  };
}

/** Runs a lib/validate.ts check, turning its ValidationError into a warning and undefined. */
export function validated<T>(where: string, value: unknown, warn: Warn, check: () => T, outcome = 'ignored'): T | undefined {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    warn(`${err.message}; ${outcome}`, { where, value: logged(value), reason: err.reason });
    return undefined;
  }
}

export function ipFromApi(value: unknown, where: string, warn: Warn): string | undefined {
  return validated(where, value, warn, () => validateIp(where, value));
}

/**
 * IP literal → ip, DNS name → hostname. A hostname must have at least two labels: a cloud
 * LB name is always fully qualified, and a single label would be looked up through the
 * resolver's search domains, answering for some other name.
 */
export function endpointFromApi(value: unknown, where: string, warn: Warn): Endpoint | undefined {
  const endpoint = validated(where, value, warn, () => parseEndpoint(where, value));
  if (endpoint?.kind === 'hostname' && !endpoint.hostname.includes('.')) {
    warnIgnored(warn, where, value, 'is a single-label name, not a fully qualified host name');
    return undefined;
  }
  return endpoint;
}

export function endpointKey(endpoint: Endpoint): string {
  return endpoint.kind === 'ip' ? endpoint.ip : endpoint.hostname;
}

export interface Located<T> {
  readonly item: T;
  readonly where: string;
}

/** The elements of a list field with where each one sits; anything but a list (or nothing) is warned about. */
export function elementsOf(values: unknown, where: string, warn: Warn): Located<unknown>[] {
  if (values === undefined || values === null) return [];
  if (!Array.isArray(values)) {
    warnIgnored(warn, where, values, 'is not a list');
    return [];
  }
  return values.map((item: unknown, i) => ({ item, where: `${where}[${i}]` }));
}

/** Keeps the first of each key, warning about each repeat. */
export function distinct<T>(found: readonly Located<T>[], keyOf: (item: T) => string, warn: Warn): T[] {
  const seen = new Set<string>();
  const kept: T[] = [];
  for (const { item, where: at } of found) {
    const key = keyOf(item);
    if (seen.has(key)) {
      warnIgnored(warn, at, key, 'repeats an earlier entry');
      continue;
    }
    seen.add(key);
    kept.push(item);
  }
  return kept;
}

/**
 * Keeps the first of each key and at most LIMITS.maxIpsPerName items: what CoreDNS answers
 * and what the Infrastructure status can hold. Repeats and the overflow are warned about.
 */
export function distinctCapped<T>(found: readonly Located<T>[], keyOf: (item: T) => string, where: string, warn: Warn): T[] {
  const kept = distinct(found, keyOf, warn);
  if (kept.length > LIMITS.maxIpsPerName) {
    const total = kept.length;
    const dropped = kept.splice(LIMITS.maxIpsPerName).map(keyOf);
    // Named up to the limit: an object may list thousands, and a warning stays one short line.
    const named = dropped.slice(0, LIMITS.maxIpsPerName);
    const more = dropped.length > named.length ? ` and ${dropped.length - named.length} more` : '';
    warn(`${where}: ${total} distinct entries exceed the limit of ${LIMITS.maxIpsPerName}; ignored the last ${dropped.length}: ${named.join(', ')}${more}`, {
      where,
      dropped: named,
    });
  }
  return kept;
}

/** Canonical IPs of a list field: empty, non-string, malformed and repeated entries dropped, at most 16. */
export function ipsFromApi(values: unknown, where: string, warn: Warn): string[] {
  const found = elementsOf(values, where, warn).flatMap(({ item, where: at }) => {
    const ip = ipFromApi(item, at, warn);
    return ip === undefined ? [] : [{ item: ip, where: at }];
  });
  return distinctCapped(found, (ip) => ip, where, warn);
}

/**
 * An LB's endpoints from already located values: invalid and repeated ones dropped. Not cut
 * at 16, as a tenant's list is: an LB's list is the installer's or the admin's, and over the
 * limit it is refused whole where it is served or published, naming it, never served cut.
 */
export function endpointsFromApi(values: readonly Located<unknown>[], warn: Warn): Endpoint[] {
  const found = values.flatMap(({ item, where: at }) => {
    const endpoint = endpointFromApi(item, at, warn);
    return endpoint === undefined ? [] : [{ item: endpoint, where: at }];
  });
  return distinct(found, endpointKey, warn);
}

/*
 * A Kubernetes object name (RFC 1123 subdomain). Sources end up in Corefile comments and
 * names built from them, so namespace and name are checked rather than trusted.
 */
const OBJECT_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
/** What an Event's involvedObject.uid may carry from the API: the server's UUIDs, nothing to escape. */
const UID = /^[0-9a-zA-Z-]{1,64}$/;

export interface ObjectIdentity {
  readonly namespace: string;
  readonly name: string;
  /** metadata.creationTimestamp, '' when missing (sorts as the oldest: the API server always sets it). */
  readonly created: string;
  /** metadata.uid, for an Event about the object (`kubectl describe` finds Events by it). */
  readonly uid?: string;
}

/** Namespace, name and creation time of a namespaced object, or undefined (warned) when they are not valid. */
export function identityOf(metadata: (ApiObjectMeta & { readonly creationTimestamp?: unknown }) | undefined, object: string, warn: Warn, outcome: string): ObjectIdentity | undefined {
  const { namespace, name, creationTimestamp, uid } = metadata ?? {};
  if (typeof namespace !== 'string' || !OBJECT_NAME.test(namespace) || typeof name !== 'string' || !OBJECT_NAME.test(name)) {
    warnIgnored(warn, `${object} metadata`, { namespace, name }, 'is not a valid namespace and name', outcome);
    return undefined;
  }
  const created = creationTimestamp instanceof Date ? creationTimestamp.toISOString() : typeof creationTimestamp === 'string' ? creationTimestamp : '';
  return { namespace, name, created, ...(typeof uid === 'string' && UID.test(uid) ? { uid } : {}) };
}
