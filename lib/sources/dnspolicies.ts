import { BlockList } from 'node:net';
import { canonicalIp, ipFamily } from '../grammar/ip.js';
import type { Endpoint, OwnedEndpoints } from '../model.js';
import { validateDnsName, validateGeoCode, validateWeight } from '../grammar/validate.js';
import { leafLabel, listenerEndpoints, type LoadBalancing } from './gateway-endpoints.js';
import type { GatewayListener, GatewayView } from './gateways.js';
import { perObject, sameObjects } from './per-object.js';
import type { RouteAttachment } from './httproutes.js';
import { sectionNameOf } from './gateways.js';
import { describeObject, elementsOf, identityOf, validated, warnIgnored, type ApiObjectMeta, type ObjectIdentity, type Warn } from './untrusted.js';

/** `dnspolicies.kuadrant.io` v1 as far as lbdns reads it; every field may be missing. */
export interface DNSPolicy {
  readonly metadata?: ApiObjectMeta & { readonly creationTimestamp?: unknown };
  readonly spec?: {
    readonly targetRef?: { readonly group?: unknown; readonly kind?: unknown; readonly name?: unknown; readonly sectionName?: unknown };
    readonly loadBalancing?: { readonly weight?: unknown; readonly geo?: unknown; readonly defaultGeo?: unknown };
    readonly excludeAddresses?: unknown;
  };
}

interface PolicyView {
  readonly id: ObjectIdentity;
  readonly gateway: string;
  readonly sectionName: string | undefined;
  readonly loadBalancing: LoadBalancing | undefined;
  readonly excluded: (address: Endpoint) => boolean;
}

function loadBalancingOf(policy: DNSPolicy, object: string, warn: Warn): LoadBalancing | undefined | null {
  const lb = policy.spec?.loadBalancing;
  if (lb === undefined || lb === null) return undefined;
  const where = `${object} spec.loadBalancing`;
  const weight = validated(`${where}.weight`, lb.weight ?? 120, warn, () => validateWeight(`${where}.weight`, lb.weight ?? 120), 'policy not applied');
  const geo = validated(`${where}.geo`, lb.geo, warn, () => validateGeoCode(`${where}.geo`, lb.geo), 'policy not applied');
  if (weight === undefined || geo === undefined) return null;
  if (geo === '*') {
    warnIgnored(warn, `${where}.geo`, lb.geo, 'is the default-geo marker, not a geo; set defaultGeo instead', 'policy not applied');
    return null;
  }
  return { weight, geo, defaultGeo: lb.defaultGeo === true };
}

/** excludeAddresses: IP literals, CIDRs and host names; anything else is warned about and excludes nothing. */
function exclusionsOf(policy: DNSPolicy, object: string, warn: Warn): (address: Endpoint) => boolean {
  const blocks = new BlockList();
  const hostnames = new Set<string>();
  for (const { item, where } of elementsOf(policy.spec?.excludeAddresses, `${object} spec.excludeAddresses`, warn)) {
    const text = typeof item === 'string' ? item : '';
    const slash = text.indexOf('/');
    const ip = canonicalIp(slash < 0 ? text : text.slice(0, slash));
    const prefix = slash < 0 ? undefined : text.slice(slash + 1);
    if (ip !== null && prefix === undefined) {
      blocks.addAddress(ip, ipFamily(ip) === 4 ? 'ipv4' : 'ipv6');
    } else if (ip !== null && /^[0-9]{1,3}$/.test(prefix ?? '') && Number(prefix) <= (ipFamily(ip) === 4 ? 32 : 128)) {
      blocks.addSubnet(ip, Number(prefix), ipFamily(ip) === 4 ? 'ipv4' : 'ipv6');
    } else {
      const name = validated(where, item, warn, () => validateDnsName(where, item));
      if (name !== undefined) hostnames.add(name);
    }
  }
  // BlockList.check builds a SocketAddress on every call: skipped when nothing is excluded.
  if (blocks.rules.length === 0 && hostnames.size === 0) return () => false;
  return (address) => (address.kind === 'ip' ? blocks.check(address.ip, ipFamily(address.ip) === 4 ? 'ipv4' : 'ipv6') : hostnames.has(address.hostname));
}

function policyView(policy: DNSPolicy, warn: Warn): PolicyView | undefined {
  if (typeof policy !== 'object' || policy === null) {
    warnIgnored(warn, 'dnspolicy list item', policy, 'is not an object');
    return undefined;
  }
  if (policy.metadata?.deletionTimestamp) return undefined;
  const object = describeObject('dnspolicy', policy.metadata);
  const id = identityOf(policy.metadata, object, warn, 'policy not applied');
  if (id === undefined) return undefined;
  const ref = policy.spec?.targetRef;
  if (ref?.group !== 'gateway.networking.k8s.io' || ref.kind !== 'Gateway' || typeof ref.name !== 'string') {
    warnIgnored(warn, `${object} spec.targetRef`, ref, 'does not target a Gateway', 'policy not applied');
    return undefined;
  }
  const hasSection = ref.sectionName !== undefined && ref.sectionName !== null;
  const sectionName = hasSection ? sectionNameOf(ref.sectionName, `${object} spec.targetRef.sectionName`, warn) : undefined;
  if (hasSection && sectionName === undefined) return undefined;
  const loadBalancing = loadBalancingOf(policy, object, warn);
  if (loadBalancing === null) return undefined;
  return { id, gateway: `${id.namespace}/${ref.name}`, sectionName, loadBalancing, excluded: exclusionsOf(policy, object, warn) };
}

const older = (a: ObjectIdentity, b: ObjectIdentity): number => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Host names of the Gateway's routes accepted on this listener, intersected with its host name (Gateway API rules: `*.x` is a suffix match). */
function listenerHosts(listener: GatewayListener, routes: readonly RouteAttachment[]): string[] {
  const own = listener.hostname;
  const hosts = new Set<string>(own === undefined ? [] : [own]);
  if (own !== undefined && !own.startsWith('*.')) return [own];
  const suffix = own === undefined ? undefined : own.slice(1);
  for (const route of routes) {
    if (route.sectionName !== undefined && route.sectionName !== listener.name) continue;
    for (const h of route.hostnames) if (suffix === undefined || (h.endsWith(suffix) && h !== own && h.length > suffix.length + 1)) hosts.add(h);
  }
  return [...hosts].sort();
}

/** The longest configured zone a name lies in, or '' when none. */
export function zoneOf(name: string, zones: readonly string[]): string {
  const body = name.startsWith('*.') ? name.slice(2) : name;
  let best = '';
  for (const z of zones) if ((body === z || body.endsWith(`.${z}`)) && z.length > best.length) best = z;
  return best;
}

export interface PolicyInputs {
  readonly policies: readonly DNSPolicy[];
  readonly gateways: readonly GatewayView[];
  readonly routes: readonly RouteAttachment[];
  readonly zones: readonly string[];
  /** `NAMESPACE/HOST` of every Kuadrant DNSRecord's rootHost: Kuadrant already built those. */
  readonly kuadrantHosts: ReadonlySet<string>;
}

/** What one Gateway's endpoints are built from, besides the Gateway. */
interface EndpointInputs {
  /** Per listener, the policy that applies to it. */
  readonly policies: readonly (PolicyView | undefined)[];
  readonly routes: readonly RouteAttachment[];
  readonly zones: readonly string[];
  readonly kuadrantHosts: ReadonlySet<string>;
}

const policyViewOf = perObject(policyView);

/** Views are kept per object, so equal inputs are the same objects: a change rebuilds its own Gateway's endpoints only. */
const built = new WeakMap<GatewayView, { inputs: EndpointInputs; owners: OwnedEndpoints[] }>();

function gatewayEndpoints(gateway: GatewayView, inputs: EndpointInputs): OwnedEndpoints[] {
  const kept = built.get(gateway);
  if (kept !== undefined && kept.inputs.zones === inputs.zones && kept.inputs.kuadrantHosts === inputs.kuadrantHosts && sameObjects(kept.inputs.policies, inputs.policies) && sameObjects(kept.inputs.routes, inputs.routes)) return kept.owners;
  const owners: OwnedEndpoints[] = [];
  const leaf = leafLabel(gateway.id.namespace, gateway.id.name);
  // Per policy, not per listener: the listeners' endpoints then share one address list.
  const addressesFor = new Map<PolicyView, readonly Endpoint[]>();
  gateway.listeners.forEach((listener, i) => {
    const policy = inputs.policies[i];
    if (policy === undefined || listener.attachedRoutes <= 0) return;
    let addresses = addressesFor.get(policy);
    if (addresses === undefined) addressesFor.set(policy, (addresses = gateway.addresses.filter((a) => !policy.excluded(a))));
    // Joined, not a template: one flat string per listener, not a chain of eight concatenations.
    const source = ['dnspolicy/', policy.id.namespace, '/', policy.id.name, ':gateway/', gateway.id.name, '/', listener.name].join('');
    for (const host of listenerHosts(listener, inputs.routes)) {
      if (inputs.kuadrantHosts.has(`${gateway.id.namespace}/${host}`)) continue;
      const endpoints = listenerEndpoints(host, addresses, policy.loadBalancing, leaf);
      if (endpoints.length === 0) continue;
      owners.push({ source, namespace: policy.id.namespace, created: policy.id.created, zone: zoneOf(host, inputs.zones), endpoints });
    }
  });
  built.set(gateway, { inputs, owners });
  return owners;
}

/**
 * For each Gateway listener with attached routes, the policy that applies (one targeting its
 * section, else one targeting the whole Gateway; among several, the oldest) and the endpoints
 * Kuadrant would build for each of its hosts. One owner per host, so a refusal names a host.
 */
export function dnsPolicyEndpoints(inputs: PolicyInputs, warn: Warn): OwnedEndpoints[] {
  const policies = inputs.policies.flatMap((p) => policyViewOf(p, warn) ?? []).sort((a, b) => older(a.id, b.id));
  const claimed = new Map<string, PolicyView>();
  for (const policy of policies) {
    const target = `${policy.gateway}#${policy.sectionName ?? ''}`;
    const first = claimed.get(target);
    if (first !== undefined) {
      warnIgnored(warn, `dnspolicy ${policy.id.namespace}/${policy.id.name} spec.targetRef`, target, `targets what the older dnspolicy ${first.id.namespace}/${first.id.name} already targets`, 'policy not applied');
      continue;
    }
    claimed.set(target, policy);
  }
  const routes = new Map<string, RouteAttachment[]>();
  for (const route of inputs.routes) {
    const list = routes.get(route.gateway);
    if (list === undefined) routes.set(route.gateway, [route]);
    else list.push(route);
  }
  const gateways = new Map(inputs.gateways.map((g) => [`${g.id.namespace}/${g.id.name}`, g]));
  return [...gateways].flatMap(([key, gateway]) =>
    gatewayEndpoints(gateway, {
      policies: gateway.listeners.map((l) => claimed.get(`${key}#${l.name}`) ?? claimed.get(`${key}#`)),
      routes: routes.get(key) ?? [],
      zones: inputs.zones,
      kuadrantHosts: inputs.kuadrantHosts,
    }),
  );
}
