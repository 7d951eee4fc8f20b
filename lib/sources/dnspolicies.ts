import { BlockList } from 'node:net';
import { canonicalIp, ipFamily } from '../grammar/ip.js';
import type { BuiltEndpoint, GatewayTtls, InvolvedObject, OwnedEndpoints } from '../model.js';
import { validateGeoCode, validateWeight, withinDnsLimits } from '../grammar/validate.js';
import { buildEndpoints, ClusterIdUnknown, type BuildTarget, type LoadBalancing } from './gateway-endpoints.js';
import type { GatewayAddress, GatewayView } from './gateways.js';
import { perObject, sameObjects } from './per-object.js';
import { sectionNameOf } from './gateways.js';
import { servedEndpoints, servedWithWarnings } from './served-endpoints.js';
import { describeObject, identityOf, objectRef, onObject, validated, warnIgnored, type ApiObjectMeta, type ObjectIdentity, type Warn } from './untrusted.js';

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
  readonly deleting: boolean;
  /**
   * What it asks for; undefined when it cannot apply (being deleted, or invalid). Such a policy
   * still holds its target, as in Kuadrant: a Gateway's policy skips a listener with any policy
   * of its own, and a newer policy on the same target is a conflict even when the older fails.
   */
  readonly applies: { readonly loadBalancing: LoadBalancing | undefined; readonly excluded: (address: GatewayAddress) => boolean } | undefined;
}

/** The DNSPolicy as an Event's involved object: a policy that cannot apply is the tenant's to fix. */
const regarding = (id: ObjectIdentity): InvolvedObject => objectRef('kuadrant.io/v1', 'DNSPolicy', id);

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
  // Kuadrant's builder names the default geo's record set `default`: a geo of that name would be a second record of the set, with another geo code.
  if (geo === 'default' && lb.defaultGeo === true) {
    warnIgnored(warn, `${where}.geo`, lb.geo, 'is the name of the default geo\'s record set, which defaultGeo adds beside it; name the geo otherwise', 'policy not applied');
    return null;
  }
  return { weight, geo, defaultGeo: lb.defaultGeo === true };
}

/**
 * excludeAddresses as Kuadrant reads it: an entry with a `/` is a CIDR removing the IPs in it,
 * and one that does not parse fails the whole policy (null); any entry removes the address
 * whose value is the same text.
 */
function exclusionsOf(policy: DNSPolicy, object: string, warn: Warn): ((address: GatewayAddress) => boolean) | null {
  // One list per family: a BlockList matches an IPv4 address against IPv6 rules as ::ffff:a.b.c.d, where Go's IPNet.Contains (Kuadrant's) never does.
  const blocks = { 4: new BlockList(), 6: new BlockList() } as const;
  const exact = new Set<string>();
  const entries = policy.spec?.excludeAddresses;
  if (entries === undefined || entries === null) return () => false;
  if (!Array.isArray(entries)) {
    warnIgnored(warn, `${object} spec.excludeAddresses`, entries, 'is not a list', 'policy not applied');
    return null;
  }
  for (const [i, item] of entries.entries()) {
    const text = typeof item === 'string' ? item : String(item);
    exact.add(text);
    const slash = text.indexOf('/');
    if (slash < 0) continue;
    const written = text.slice(0, slash);
    // Go's IPNet.Contains reads an IPv4-mapped network (::ffff:a.b.c.d/N) as a.b.c.d/N-96, for IPv4 addresses only.
    const mapped = /^::ffff:([0-9.]+)$/i.exec(written)?.[1];
    const ip = canonicalIp(mapped ?? written);
    const prefix = text.slice(slash + 1);
    const bits = Number(prefix);
    if (ip === null || (mapped !== undefined && ipFamily(ip) !== 4) || !/^[0-9]+$/.test(prefix) || bits > (mapped !== undefined || ipFamily(ip) === 6 ? 128 : 32)) {
      const where = `${object} spec.excludeAddresses[${i}]`;
      warn(`${where}: ${JSON.stringify(text).slice(0, 80)} is not a CIDR; policy not applied (as Kuadrant: a CIDR that does not parse fails the policy)`, { where, reason: 'is not a CIDR' });
      return null;
    }
    if (mapped !== undefined && bits < 96) {
      // Masked below its ::ffff: part, the network is an IPv6 one: Go matches IPv6 addresses in it, and never an IPv4 one.
      blocks[6].addSubnet(`::ffff:${ip}`, bits, 'ipv6');
      continue;
    }
    const family = ipFamily(ip);
    blocks[family].addSubnet(ip, mapped === undefined ? bits : bits - 96, family === 4 ? 'ipv4' : 'ipv6');
  }
  // BlockList.check builds a SocketAddress on every call: skipped when no CIDR of the family is given.
  const cidrs = { 4: blocks[4].rules.length > 0, 6: blocks[6].rules.length > 0 };
  return ({ endpoint, value }) => {
    if (exact.has(value)) return true;
    if (endpoint.kind !== 'ip') return false;
    const family = ipFamily(endpoint.ip);
    return cidrs[family] && blocks[family].check(endpoint.ip, family === 4 ? 'ipv4' : 'ipv6');
  };
}

function policyView(policy: DNSPolicy, warn: Warn): PolicyView | undefined {
  if (typeof policy !== 'object' || policy === null) {
    warnIgnored(warn, 'dnspolicy list item', policy, 'is not an object');
    return undefined;
  }
  const object = describeObject('dnspolicy', policy.metadata);
  const id = identityOf(policy.metadata, object, warn, 'policy not applied');
  if (id === undefined) return undefined;
  return viewOfValid(policy, id, object, onObject(warn, regarding(id)));
}

function viewOfValid(policy: DNSPolicy, id: ObjectIdentity, object: string, warn: Warn): PolicyView | undefined {
  const ref = policy.spec?.targetRef;
  if (ref?.group !== 'gateway.networking.k8s.io' || ref.kind !== 'Gateway' || typeof ref.name !== 'string') {
    warnIgnored(warn, `${object} spec.targetRef`, ref, 'does not target a Gateway', 'policy not applied');
    return undefined;
  }
  const hasSection = ref.sectionName !== undefined && ref.sectionName !== null;
  const sectionName = hasSection ? sectionNameOf(ref.sectionName, `${object} spec.targetRef.sectionName`, warn) : undefined;
  if (hasSection && sectionName === undefined) return undefined;
  const gateway = `${id.namespace}/${ref.name}`;
  if (policy.metadata?.deletionTimestamp) return { id, gateway, sectionName, deleting: true, applies: undefined };
  const loadBalancing = loadBalancingOf(policy, object, warn);
  const excluded = exclusionsOf(policy, object, warn);
  return { id, gateway, sectionName, deleting: false, applies: loadBalancing === null || excluded === null ? undefined : { loadBalancing, excluded } };
}

const older = (a: ObjectIdentity, b: ObjectIdentity): number => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

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
  readonly zones: readonly string[];
  /** `NAMESPACE/HOST` of every Kuadrant DNSRecord's rootHost: Kuadrant already built those. */
  readonly kuadrantHosts: ReadonlySet<string>;
  /** The kube-system Namespace's UID, undefined until read. */
  readonly clusterId: string | undefined;
  readonly ttls: GatewayTtls;
}

/** What one Gateway's endpoints are built from, besides the Gateway. */
interface EndpointInputs {
  /** Per listener, the policy that applies to it. */
  readonly policies: readonly (PolicyView | undefined)[];
  readonly zones: readonly string[];
  readonly kuadrantHosts: ReadonlySet<string>;
  readonly clusterId: string | undefined;
  readonly ttls: GatewayTtls;
}

const policyViewOf = perObject(policyView);

/** Views are kept per object, so equal inputs are the same objects: a change rebuilds its own Gateway's endpoints only. */
const built = new WeakMap<GatewayView, { inputs: EndpointInputs; owners: OwnedEndpoints[]; warnings: Parameters<Warn>[] }>();

function gatewayEndpoints(gateway: GatewayView, inputs: EndpointInputs, warn: Warn): OwnedEndpoints[] {
  const kept = built.get(gateway);
  if (kept !== undefined && kept.inputs.zones === inputs.zones && kept.inputs.kuadrantHosts === inputs.kuadrantHosts && kept.inputs.clusterId === inputs.clusterId && kept.inputs.ttls === inputs.ttls && sameObjects(kept.inputs.policies, inputs.policies)) {
    for (const w of kept.warnings) warn(...w);
    return kept.owners;
  }
  const owners: OwnedEndpoints[] = [];
  const warnings: Parameters<Warn>[] = [];
  const keep: Warn = (msg, fields) => {
    warnings.push([msg, fields]);
    warn(msg, fields);
  };
  // Per policy, not per listener: the listeners' endpoints share one target, and `display`'s builder with it.
  const perPolicy = new Map<PolicyView, { target: BuildTarget; again: (host: string) => BuiltEndpoint[]; about: InvolvedObject }>();
  gateway.listeners.forEach((listener, i) => {
    const policy = inputs.policies[i];
    // As Kuadrant: one DNSRecord per listener with a host name and attached routes, for that host name.
    const host = listener.hostname;
    const applies = policy?.applies;
    if (policy === undefined || applies === undefined || host === undefined || listener.attachedRoutes <= 0) return;
    if (inputs.kuadrantHosts.has(`${policy.id.namespace}/${host}`)) return;
    let shared = perPolicy.get(policy);
    if (shared === undefined) {
      const target: BuildTarget = { name: gateway.id.name, namespace: gateway.id.namespace, addresses: gateway.addresses.filter((a) => !applies.excluded(a)).map((a) => a.endpoint), clusterId: inputs.clusterId };
      const { loadBalancing } = applies;
      const { ttls } = inputs;
      // Built again when asked (display): keeping Kuadrant's form of every endpoint beside the served one would double what a Gateway costs.
      const again = (host: string): BuiltEndpoint[] => {
        const built = buildEndpoints(host, target, loadBalancing, ttls);
        const { notes } = servedEndpoints(built);
        return built.map((endpoint, n) => ({ endpoint, source: `dnspolicy/${policy.id.namespace}/${policy.id.name}`, ...(notes[n] === undefined ? {} : { served: notes[n] }) }));
      };
      perPolicy.set(policy, (shared = { target, again, about: regarding(policy.id) }));
    }
    const { target, again, about } = shared;
    // Warnings about a listener's names are about its policy: Events go to it.
    const onPolicy = onObject(keep, about);
    // Joined, not a template: one flat string per listener, not a chain of eight concatenations.
    const source = ['dnspolicy/', policy.id.namespace, '/', policy.id.name, ':gateway/', gateway.id.name, '/', listener.name].join('');
    let kuadrant;
    try {
      kuadrant = buildEndpoints(host, target, applies.loadBalancing, inputs.ttls);
    } catch (err) {
      if (!(err instanceof ClusterIdUnknown)) throw err;
      onPolicy(`${source}: ${err.message}; its load-balanced host ${host} is not served until it is`, { where: source, reason: err.message });
      return;
    }
    // A long host gives derived names (klb., the geo, the leaf) past DNS's limits: CoreDNS loads them and answers packets clients refuse, or refuses the zone file.
    const overlong = kuadrant.find((e) => !withinDnsLimits(e.dnsName));
    if (overlong !== undefined) {
      const reason = `the name ${overlong.dnsName.slice(0, 80)}… Kuadrant builds for it is ${overlong.dnsName.length} characters, more than DNS allows (253, and 63 a label)`;
      // `where` ends in hostname: counted and reported as a refused name (NameRefused), not as data ignored.
      onPolicy(`${source}: ${reason}; its host ${host} is not served`, { where: `${source} hostname`, reason });
      return;
    }
    const endpoints = servedWithWarnings(kuadrant, source, onPolicy);
    if (endpoints.length === 0) return;
    // The claim exists since both objects do: an old policy does not make a new Gateway's hosts old.
    const created = policy.id.created > gateway.id.created ? policy.id.created : gateway.id.created;
    owners.push({ source, namespace: policy.id.namespace, created, zone: zoneOf(host, inputs.zones), endpoints, built: { host, again }, regarding: about });
  });
  built.set(gateway, { inputs, owners, warnings });
  return owners;
}

/**
 * For each Gateway listener with attached routes, the policy that applies (the oldest of those
 * targeting its section, else of those targeting the whole Gateway, as Kuadrant chooses) and the
 * endpoints Kuadrant would build for its host name. One owner per listener, so a refusal names a host.
 */
export function dnsPolicyEndpoints(inputs: PolicyInputs, warn: Warn): OwnedEndpoints[] {
  const policies = inputs.policies.flatMap((p) => policyViewOf(p, warn) ?? []).sort((a, b) => older(a.id, b.id));
  /** Targets with any policy, one being deleted included. */
  const attached = new Set<string>();
  const claimed = new Map<string, PolicyView>();
  for (const policy of policies) {
    const target = `${policy.gateway}#${policy.sectionName ?? ''}`;
    attached.add(target);
    if (policy.deleting) continue;
    const first = claimed.get(target);
    if (first !== undefined) {
      // Kuadrant refuses only a strictly newer one; two of one age both write the target's record, the last to reconcile winning: lbdns keeps the first by name.
      const which = first.id.created === policy.id.created ? `dnspolicy ${first.id.namespace}/${first.id.name}, created the same second and first by name,` : `older dnspolicy ${first.id.namespace}/${first.id.name}`;
      warnIgnored(onObject(warn, regarding(policy.id)), `dnspolicy ${policy.id.namespace}/${policy.id.name} spec.targetRef`, target, `targets what the ${which} already targets`, 'policy not applied');
      continue;
    }
    claimed.set(target, policy);
  }
  const gateways = new Map(inputs.gateways.map((g) => [`${g.id.namespace}/${g.id.name}`, g]));
  return [...gateways].flatMap(([key, gateway]) =>
    gatewayEndpoints(
      gateway,
      {
        policies: gateway.listeners.map((l) => claimed.get(attached.has(`${key}#${l.name}`) ? `${key}#${l.name}` : `${key}#`)),
        zones: inputs.zones,
        kuadrantHosts: inputs.kuadrantHosts,
        clusterId: inputs.clusterId,
        ttls: inputs.ttls,
      },
      warn,
    ),
  );
}
