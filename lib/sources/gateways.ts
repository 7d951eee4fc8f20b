import type { Endpoint } from '../model.js';
import { quote } from '../errors.js';
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
  type ObjectIdentity,
  type Warn,
} from './untrusted.js';

/** `gateways.gateway.networking.k8s.io` v1 as far as lbdns reads it; every field may be missing. */
export interface Gateway {
  readonly metadata?: ApiObjectMeta & { readonly creationTimestamp?: unknown };
  readonly spec?: { readonly listeners?: unknown };
  readonly status?: { readonly addresses?: unknown; readonly listeners?: unknown };
}

/**
 * What the sources read of a Gateway, and nothing else: the monitor keeps every Gateway of the
 * cluster for as long as it runs, and a listener's status conditions and supported kinds would
 * be most of each. A list entry that is not an object, or a list that is not one, is kept as it
 * came, so it is still reported.
 */
export function gatewayProjection(gateway: Gateway): Gateway {
  if (typeof gateway !== 'object' || gateway === null) return gateway;
  const pick = (list: unknown, keys: readonly string[]): unknown =>
    Array.isArray(list)
      ? list.map((entry: unknown) => {
          if (typeof entry !== 'object' || entry === null) return entry;
          const picked: Record<string, unknown> = {};
          for (const key of keys) if (key in entry) picked[key] = (entry as Record<string, unknown>)[key];
          return picked;
        })
      : list;
  // resourceVersion too: the informer's cache is keyed and resumed by it.
  const { name, namespace, uid, resourceVersion, creationTimestamp } = (gateway.metadata ?? {}) as Record<string, unknown>;
  return {
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp } as Gateway['metadata'],
    spec: { listeners: pick(gateway.spec?.listeners, ['name', 'hostname']) },
    status: { addresses: pick(gateway.status?.addresses, ['type', 'value']), listeners: pick(gateway.status?.listeners, ['name', 'attachedRoutes']) },
  };
}

export interface GatewayListener {
  readonly name: string;
  /** Lower case; may start with `*.`; undefined when the listener matches any host. */
  readonly hostname: string | undefined;
  /** status.listeners[].attachedRoutes; 0 when the status does not say. */
  readonly attachedRoutes: number;
}

/** A Gateway, sanitised: what DNSPolicies are matched against. */
export interface GatewayView {
  readonly id: ObjectIdentity;
  readonly listeners: readonly GatewayListener[];
  /** status.addresses: IP literals and host names, valid, distinct, at most 16. */
  readonly addresses: readonly GatewayAddress[];
}

/** An address and its `value` as the Gateway writes it: Kuadrant's excludeAddresses compares that text. */
export interface GatewayAddress {
  readonly endpoint: Endpoint;
  readonly value: string;
}

/** A listener or section name (Gateway API's SectionName grammar). */
const SECTION_NAME = /^[a-z0-9]([-a-z0-9]{0,251}[a-z0-9])?$/;

export function sectionNameOf(value: unknown, where: string, warn: Warn): string | undefined {
  if (typeof value === 'string' && SECTION_NAME.test(value)) return value;
  warnIgnored(warn, where, value, 'is not a valid listener name');
  return undefined;
}

function attachedRoutesOf(gateway: Gateway, object: string, warn: Warn): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { item, where } of elementsOf(gateway.status?.listeners, `${object} status.listeners`, warn)) {
    const entry = item as { name?: unknown; attachedRoutes?: unknown } | null;
    if (typeof entry !== 'object' || entry === null) continue;
    const name = sectionNameOf(entry.name, `${where}.name`, warn);
    const count = entry.attachedRoutes;
    if (name === undefined) continue;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      warnIgnored(warn, `${where}.attachedRoutes`, count, 'is not a whole number', 'listener not served');
      continue;
    }
    counts.set(name, count);
  }
  return counts;
}

function listenersOf(gateway: Gateway, object: string, warn: Warn): GatewayListener[] {
  const attached = attachedRoutesOf(gateway, object, warn);
  const found = elementsOf(gateway.spec?.listeners, `${object} spec.listeners`, warn).flatMap(({ item, where }): Located<GatewayListener>[] => {
    const entry = item as { name?: unknown; hostname?: unknown } | null;
    if (typeof entry !== 'object' || entry === null) return [];
    const name = sectionNameOf(entry.name, `${where}.name`, warn);
    if (name === undefined) return [];
    let hostname: string | undefined;
    if (entry.hostname !== undefined && entry.hostname !== null) {
      hostname = validated(`${where}.hostname`, entry.hostname, warn, () => validateDnsName(`${where}.hostname`, entry.hostname, { allowWildcard: true, minLabels: 2 }), 'listener not served');
      if (hostname === undefined) return [];
    }
    return [{ item: { name, hostname, attachedRoutes: attached.get(name) ?? 0 }, where }];
  });
  const seen = new Set<string>();
  return found.flatMap(({ item, where }) => {
    if (seen.has(item.name)) {
      warnIgnored(warn, `${where}.name`, item.name, 'repeats an earlier listener');
      return [];
    }
    seen.add(item.name);
    return [item];
  });
}

/** status.addresses entries of type IPAddress (an IP literal) or Hostname (a fully qualified name); others are skipped. */
function addressesOf(gateway: Gateway, object: string, warn: Warn): GatewayAddress[] {
  const where = `${object} status.addresses`;
  const found = elementsOf(gateway.status?.addresses, where, warn).flatMap(({ item, where: at }): Located<GatewayAddress>[] => {
    const entry = item as { type?: unknown; value?: unknown } | null;
    if (typeof entry !== 'object' || entry === null) {
      warnIgnored(warn, at, item, 'is not an address');
      return [];
    }
    const type = entry.type ?? 'IPAddress';
    if (typeof type !== 'string') {
      warnIgnored(warn, `${at}.type`, type, 'is not an address type');
      return [];
    }
    const endpoint = endpointFromApi(entry.value, `${at}.value`, warn);
    if (endpoint === undefined) return [];
    // As Kuadrant's builder (targetsFromAddresses): every type but IPAddress (Hostname, NamedAddress, a domain-prefixed one) is a host name.
    const ip = type === 'IPAddress';
    if (ip !== (endpoint.kind === 'ip')) {
      warnIgnored(warn, `${at}.value`, entry.value, ip ? 'is not an IP address (type IPAddress)' : `is not a host name, which Kuadrant takes an address of type ${quote(type)} for`);
      return [];
    }
    return [{ item: { endpoint, value: entry.value as string }, where: at }];
  });
  return distinctCapped(found, (a) => endpointKey(a.endpoint), where, warn);
}

export function gatewayView(gateway: Gateway, warn: Warn): GatewayView | undefined {
  if (typeof gateway !== 'object' || gateway === null) {
    warnIgnored(warn, 'gateway list item', gateway, 'is not an object');
    return undefined;
  }
  // One being deleted is served until it is gone: Kuadrant's reconciler builds its records while the Gateway is listed.
  const object = describeObject('gateway', gateway.metadata);
  const id = identityOf(gateway.metadata, object, warn, 'gateway not served');
  if (id === undefined) return undefined;
  return { id, listeners: listenersOf(gateway, object, warn), addresses: addressesOf(gateway, object, warn) };
}
