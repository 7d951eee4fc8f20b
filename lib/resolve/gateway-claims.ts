import type { GatewayEndpoint, InvolvedObject, OwnedEndpoints } from '../model.js';
import { MultiMap } from './multi-map.js';
import { bodyOf, type NameGuard } from './name-guard.js';

/*
 * Which owner's endpoints each Gateway name serves, kept from one record set to the next: a
 * change to one Gateway touches its own names, so only those are decided again. A name's
 * decision depends on the owners asking for it and nothing else, which is what makes that exact.
 */

export const REFUSAL_REASONS = ['outside-zones', 'zone-apex', 'cluster-name', 'other-source', 'other-owner', 'duplicate', 'over-limit'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export interface Refusal {
  readonly name: string;
  readonly source: string;
  /** See OwnedEndpoints.regarding. */
  readonly regarding?: InvolvedObject;
  readonly reason: RefusalReason;
  readonly detail: string;
}

export interface Claim {
  readonly endpoint: GatewayEndpoint;
  readonly owner: OwnedEndpoints;
}

const under = (name: string, root: string): boolean => name === root || name.endsWith(`.${root}`);
/** Oldest first; a tie (one listener's hosts share a source) goes by the first name, so the order is the inputs' alone. */
const older = (a: OwnedEndpoints, b: OwnedEndpoints): number =>
  a.created < b.created ? -1 : a.created > b.created ? 1 : a.source < b.source ? -1 : a.source > b.source ? 1 : (a.endpoints[0]?.dnsName ?? '') < (b.endpoints[0]?.dnsName ?? '') ? -1 : (a.endpoints[0]?.dnsName ?? '') > (b.endpoints[0]?.dnsName ?? '') ? 1 : 0;
const sameContent = (a: GatewayEndpoint, b: GatewayEndpoint): boolean => a.ttl === b.ttl && a.weight === b.weight && a.geo === b.geo && a.targets.join(' ') === b.targets.join(' ');
const family = (e: GatewayEndpoint): string => (e.recordType === 'CNAME' ? 'CNAME' : 'address');

const NONE: readonly GatewayEndpoint[] = [];
/** Who a refusal is about. */
export const by = (owner: OwnedEndpoints): Pick<Refusal, 'source' | 'regarding'> => (owner.regarding === undefined ? { source: owner.source } : { source: owner.source, regarding: owner.regarding });

/**
 * Owners' endpoints by name, indexed once per owner in one update: one object may ask for
 * thousands of names, each decided by reading it. Not kept past the update: at 10,000 hosts
 * the indexes held 4 MiB, which the monitor's memory target could not spare (bench/RESULTS.md).
 */
class EndpointsByName {
  private readonly indexes = new Map<OwnedEndpoints, Map<string, GatewayEndpoint[]>>();

  of(owner: OwnedEndpoints, name: string): readonly GatewayEndpoint[] {
    let index = this.indexes.get(owner);
    if (index === undefined) {
      index = new Map();
      for (const endpoint of owner.endpoints) {
        const named = index.get(endpoint.dnsName);
        if (named === undefined) index.set(endpoint.dnsName, [endpoint]);
        else named.push(endpoint);
      }
      this.indexes.set(owner, index);
    }
    return index.get(name) ?? NONE;
  }
}

/**
 * The owners of `before` not in `after`, and of `after` not in `before`. The sources keep an
 * unchanged owner at its place, so the lists differ at a few places; only those are compared.
 */
function ownersDiff(before: readonly OwnedEndpoints[], after: readonly OwnedEndpoints[]): { left: OwnedEndpoints[]; came: OwnedEndpoints[] } {
  const [was, is] = [new Set<OwnedEndpoints>(), new Set<OwnedEndpoints>()];
  for (let i = 0; i < Math.max(before.length, after.length); i++) {
    const [b, a] = [before[i], after[i]];
    if (b === a) continue;
    if (b !== undefined) was.add(b);
    if (a !== undefined) is.add(a);
  }
  return { left: [...was].filter((o) => !is.has(o)), came: [...is].filter((o) => !was.has(o)) };
}

export class ClaimIndex {
  private owners: readonly OwnedEndpoints[] = [];
  /** external(), until a name is claimed or a target pointed to for the first or last time. */
  private externalNames: string[] | undefined;
  /** Per owner, its endpoints refused on their own (zone, cluster names, other sources). */
  private readonly own = new Map<OwnedEndpoints, readonly Refusal[]>();
  /** name → the owners with an endpoint of that name not refused on its own. */
  private readonly askers = new MultiMap<string, OwnedEndpoints>();
  private readonly claims = new Map<string, Claim[]>();
  /** name → refusals between owners asking for it. */
  private readonly conflicts = new Map<string, Refusal[]>();
  /** name → the namespaces refused it for an older one's. */
  private readonly lost = new Map<string, ReadonlySet<string>>();
  /** CNAME target → how many accepted endpoints point to it. */
  private readonly targets = new Map<string, number>();

  /** The configured zones, for the refusal text. */
  readonly zones: string;

  constructor(
    readonly guard: NameGuard,
    private readonly zoneList: readonly string[],
  ) {
    this.zones = zoneList.join(', ');
  }

  /**
   * Moves to exactly `owners`: owners that left or came decide their names again. Returns
   * those names; undefined when most owners changed (every object listed anew) and every name
   * was decided from nothing, which then costs less than leaving and coming one by one.
   */
  update(owners: readonly OwnedEndpoints[]): ReadonlySet<string> | undefined {
    const touched = new Set<string>();
    let { left, came } = ownersDiff(this.owners, owners);
    const anew = left.length > this.owners.length / 2;
    if (anew) {
      for (const map of [this.own, this.askers, this.claims, this.conflicts, this.lost, this.targets]) map.clear();
      this.externalNames = undefined;
      [left, came] = [[], [...owners]];
    }
    for (const owner of left) this.leave(owner, touched);
    // Oldest first, so that from nothing the names come in the order print-records lists them: a host before its chain.
    for (const owner of came.sort(older)) this.join(owner, touched);
    this.owners = owners;
    const endpoints = new EndpointsByName();
    for (const name of touched) this.decide(name, endpoints);
    return anew ? undefined : touched;
  }

  /** dnsName → the endpoints served for it, all from one namespace; from nothing, oldest owner first: read it before the next update. */
  get byName(): ReadonlyMap<string, readonly Claim[]> {
    return this.claims;
  }

  /** name → the namespaces that asked for it and were refused for another's: a CNAME of theirs is not followed into it. */
  get lostBy(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.lost;
  }

  refused(): Refusal[] {
    const seen = new Map<string, Refusal>();
    const add = (r: Refusal) => {
      const key = `${r.name} ${r.source} ${r.reason}`;
      if (!seen.has(key)) seen.set(key, r);
    };
    for (const list of this.own.values()) list.forEach(add);
    for (const list of this.conflicts.values()) list.forEach(add);
    // Sorted: the maps' order is the order of past updates, and the list must be the inputs' alone.
    return [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  }

  /**
   * CNAME targets outside the zones: host names lbdns resolves itself. A target in a zone that
   * no accepted name answers is not one: CoreDNS answers it NXDOMAIN from the zone file.
   */
  external(): readonly string[] {
    this.externalNames ??= [...this.targets.keys()].filter((t) => !this.claims.has(t) && !this.zoneList.some((z) => under(t, z))).sort();
    return this.externalNames;
  }

  private verdict(owner: OwnedEndpoints, { dnsName: name, recordType }: GatewayEndpoint): Refusal | undefined {
    if (owner.zone === '') return { name, ...by(owner), reason: 'outside-zones', detail: `is in none of the gateway zones (${this.zones})` };
    if (!under(bodyOf(name), owner.zone)) return { name, ...by(owner), reason: 'outside-zones', detail: `is outside the zone ${owner.zone}` };
    // Kuadrant's CoreDNS plugin answers a record only from its labelled zone; lbdns files a name in the deepest zone it lies in.
    const inner = this.zoneList.find((z) => z.length > owner.zone.length && under(bodyOf(name), z));
    if (inner !== undefined) return { name, ...by(owner), reason: 'outside-zones', detail: `lies in the zone ${inner}, not in its own zone ${owner.zone}` };
    // RFC 1034 3.6.2: the apex holds the zone's SOA and NS, and a CNAME shares its name with nothing.
    if (recordType === 'CNAME' && name === owner.zone) return { name, ...by(owner), reason: 'zone-apex', detail: `is the apex of the zone ${owner.zone}, which cannot be a CNAME (it holds the zone's SOA and NS)` };
    const meeting = this.guard.meeting(name);
    return meeting && { name, ...by(owner), ...meeting };
  }

  private join(owner: OwnedEndpoints, touched: Set<string>): void {
    const refused: Refusal[] = [];
    for (const endpoint of owner.endpoints) {
      const { dnsName } = endpoint;
      const refusal = this.verdict(owner, endpoint);
      if (refusal !== undefined) {
        refused.push(refusal);
        continue;
      }
      this.askers.add(dnsName, owner);
      touched.add(dnsName);
    }
    if (refused.length > 0) this.own.set(owner, refused);
  }

  private leave(owner: OwnedEndpoints, touched: Set<string>): void {
    this.own.delete(owner);
    for (const { dnsName } of owner.endpoints) {
      if (this.askers.delete(dnsName, owner)) touched.add(dnsName);
    }
  }

  /**
   * Among the owners asking for one name, the oldest decides: owners of other namespaces are
   * refused (a tenant never adds targets to another's name); within the namespace, records of
   * the same type and set identifier must agree, or the later one is refused — never merged.
   * Distinct set identifiers (Kuadrant's geo and weighted sets) combine.
   */
  private decide(name: string, endpoints: EndpointsByName): void {
    const before = this.claims.get(name) ?? [];
    this.conflicts.delete(name);
    this.lost.delete(name);
    const askers = this.askers.get(name).sort(older);
    const list: Claim[] = [];
    const conflicts: Refusal[] = [];
    const lost = new Set<string>();
    const refuse = (owner: OwnedEndpoints, reason: RefusalReason, detail: string) => conflicts.push({ name, ...by(owner), reason, detail });
    for (const owner of askers) {
      for (const endpoint of endpoints.of(owner, name)) {
        const first = list[0];
        if (first === undefined) {
          list.push({ endpoint, owner });
        } else if (first.owner.namespace !== owner.namespace) {
          lost.add(owner.namespace);
          refuse(owner, 'other-owner', `is served for the older ${first.owner.source} of namespace ${first.owner.namespace}`);
        } else if (family(first.endpoint) !== family(endpoint)) {
          refuse(owner, 'duplicate', `is a ${first.endpoint.recordType} record of the older ${first.owner.source}`);
        } else {
          const same = list.find((c) => c.endpoint.recordType === endpoint.recordType && c.endpoint.setIdentifier === endpoint.setIdentifier);
          const record = `${endpoint.recordType} record${endpoint.setIdentifier ? ` (set ${endpoint.setIdentifier})` : ''}`;
          if (same === undefined) list.push({ endpoint, owner });
          else if (sameContent(same.endpoint, endpoint)) continue;
          else if (same.owner !== owner) refuse(owner, 'duplicate', `has a ${record} of the older ${same.owner.source}`);
          else refuse(owner, 'duplicate', `has a second ${record} with other targets; only its first is served`);
        }
      }
    }
    // Set in place: a name decided again keeps its place in byName.
    // Kept at its exact size (slice): a list grown by push keeps room for 17.
    if (list.length > 0) this.claims.set(name, list.slice());
    else this.claims.delete(name);
    if ((before.length === 0) !== (list.length === 0)) this.externalNames = undefined;
    if (conflicts.length > 0) this.conflicts.set(name, conflicts);
    if (lost.size > 0) this.lost.set(name, lost);
    // Counted up first: a target still pointed to never drops to 0 on the way.
    for (const { endpoint } of list) this.count(endpoint, 1);
    for (const { endpoint } of before) this.count(endpoint, -1);
  }

  private count(endpoint: GatewayEndpoint, by: number): void {
    if (endpoint.recordType !== 'CNAME') return;
    for (const t of endpoint.targets) {
      const n = (this.targets.get(t) ?? 0) + by;
      if (n === 0 || n === by) this.externalNames = undefined;
      if (n === 0) this.targets.delete(t);
      else this.targets.set(t, n);
    }
  }
}
