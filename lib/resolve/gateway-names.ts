import { splitFamilies } from '../grammar/ip.js';
import { ROLE_TRAITS, type ClusterSpec, type GatewayEndpoint, type Resolution, type WeightBlock } from '../model.js';
import { ClaimIndex, type Claim, type Refusal } from './gateway-claims.js';
import { nameGuard } from './name-guard.js';
import { MultiMap } from './multi-map.js';

/*
 * Gateway DNS names are asked for by tenants (a Gateway, a DNSPolicy, a
 * Kuadrant DNSRecord), so every name is confined before it is served: to the configured zones,
 * away from the cluster's own names and from names other sources serve, and to one owner.
 */

export type { Refusal, RefusalReason } from './gateway-claims.js';

export interface AcceptedGatewayNames {
  /** dnsName → the endpoints served for it, all from one namespace; from nothing, oldest owner first. */
  readonly byName: ReadonlyMap<string, readonly Claim[]>;
  readonly refused: readonly Refusal[];
  /** CNAME targets no accepted name answers: host names lbdns resolves itself. */
  readonly external: readonly string[];
  /** name → the namespaces that asked for it and were refused for another's (ClaimIndex.lostBy). */
  readonly lostBy: ReadonlyMap<string, ReadonlySet<string>>;
  /** Increases with every result that may differ from the one before. */
  readonly version: number;
  /** The names decided again since the result of version `after`; undefined: decided from nothing. */
  readonly changed: { readonly after: number; readonly names: ReadonlySet<string> } | undefined;
}

let index: ClaimIndex | undefined;
let last: { spec: ClusterSpec; result: AcceptedGatewayNames } | undefined;
let version = 0;

/**
 * Which endpoints are served. A name outside the owner's zone, of the cluster or of another
 * source is refused; among the owners asking for one name, the oldest decides (ClaimIndex).
 * The claims are kept for the next spec, and the result holds until then: the record set reads
 * it at once.
 */
export function acceptGatewayNames(spec: ClusterSpec): AcceptedGatewayNames {
  const gateway = spec.gateway;
  if (gateway === undefined || !ROLE_TRAITS[spec.role].clusterNames) return { byName: new Map(), refused: [], external: [], lostBy: new Map(), version: 0, changed: undefined };
  if (last?.spec === spec) return last.result;
  const guard = nameGuard(spec);
  const kept = index !== undefined && index.guard === guard && index.zones === gateway.zones.join(', ') ? index : undefined;
  const claims = kept ?? (index = new ClaimIndex(guard, gateway.zones));
  const names = claims.update(gateway.owners);
  const after = last?.result.version;
  version += 1;
  const changed = kept === undefined || after === undefined || names === undefined ? undefined : { after, names };
  last = { spec, result: { byName: claims.byName, refused: claims.refused(), external: claims.external(), lostBy: claims.lostBy, version, changed } };
  return last.result;
}

/** What one name answers: the CNAME hops, then the addresses of the chain's last name. */
/** Shared by every answer without a chain: one per address name otherwise. */
const NO_CHAIN: GatewayAnswer['chain'] = Object.freeze([]);

export interface GatewayAnswer {
  readonly chain: readonly { readonly owner: string; readonly target: string; readonly ttl: number }[];
  readonly owner: string;
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  readonly ttl: number;
  /** Per address, when the last name is a weighted set. */
  readonly weights: ReadonlyMap<string, number> | undefined;
  /** Why a chain that ends without an address does, when it is not for want of one. */
  readonly why?: string;
}

/** Longer chains than Kuadrant's (host → klb → geo → leaf → external) are refused as loops. */
const MAX_CHAIN = 8;
/**
 * How deep names are followed at most, weighted sets included (a weighted set's answer is its
 * targets' addresses at its own name, so a chain's length starts again behind it). Far beyond
 * what Kuadrant builds (host → klb → geo → weighted leaves: 4 deep), so a cut never depends on
 * which name of a served chain was asked first.
 */
const MAX_DEPTH = 32;
/** The TTL of an accepted name that answers nothing: never served, so never read. */
const NO_ANSWER_TTL = 60;

const externalAnswers = new WeakMap<Resolution, GatewayAnswer>();

/**
 * Answers names the way a client in this cluster's geo would be answered: a geo set picks
 * `geoCode`, else the default geo (`*`); a weighted set (several targets) is answered with all
 * its targets' addresses at its own name, weighted for `loadbalance weighted`; one target is a
 * CNAME hop. External targets give the addresses lbdns resolved for them.
 *
 * Answers are kept from one record set to the next with the names each one read: update()
 * forgets those of the names decided again and of the external names resolved anew, and of
 * every name whose chain passes through one, so a change costs its own chains only.
 */
export class GatewayAnswers {
  private readonly kept = new Map<string, GatewayAnswer>();
  /** name → the names its answer read; and the reverse. */
  private readonly reads = new MultiMap<string, string>();
  private readonly readBy = new MultiMap<string, string>();
  /** External names read, with the resolution they were read with. */
  private readonly externals = new Map<string, Resolution | undefined>();
  /** accepted.external as a set, made again when it changes. */
  private outside: { readonly of: readonly string[]; readonly names: ReadonlySet<string> } | undefined;
  private readonly pending = new Set<string>();
  /** Chains cut at MAX_DEPTH names deep so far: a count that moved while a name was followed says its answer was cut. */
  private cuts = 0;
  private accepted: AcceptedGatewayNames = { byName: new Map(), refused: [], external: [], lostBy: new Map(), version: 0, changed: undefined };
  private resolutions: ReadonlyMap<string, Resolution> = new Map();

  /** The geos of --geo-code, most wanted first; matched without regard to case, as Kuadrant's names lower-case them. */
  private readonly geos: readonly string[];

  constructor(readonly geoCode: string | undefined) {
    this.geos = geoCode === undefined ? [] : geoCode.toLowerCase().split(',');
  }

  /**
   * Moves to `accepted` and `resolutions`. Returns the names whose answers may have changed,
   * or undefined when every answer was forgotten (`accepted` is not the next version of the last).
   */
  update(accepted: AcceptedGatewayNames, resolutions: ReadonlyMap<string, Resolution>): ReadonlySet<string> | undefined {
    const before = this.accepted.version;
    this.accepted = accepted;
    this.resolutions = resolutions;
    if (accepted.version === before) return this.forget(this.resolvedAnew());
    if (accepted.changed?.after !== before) {
      for (const map of [this.kept, this.reads, this.readBy, this.externals]) map.clear();
      return undefined;
    }
    return this.forget([...accepted.changed.names, ...this.resolvedAnew()]);
  }

  answer(name: string): GatewayAnswer {
    return this.answerAt(name, NO_ANSWER_TTL);
  }

  private resolvedAnew(): string[] {
    const anew: string[] = [];
    for (const [name, r] of this.externals) {
      if (this.readBy.has(name)) {
        if (this.resolutions.get(name) !== r) anew.push(name);
      } else {
        this.externals.delete(name);
      }
    }
    return anew;
  }

  /** Forgets the answers of `names` and of every name whose answer read one of them. */
  private forget(names: Iterable<string>): Set<string> {
    const gone = new Set<string>();
    const queue = [...names];
    for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
      if (gone.has(name)) continue;
      gone.add(name);
      this.kept.delete(name);
      for (const read of this.reads.get(name)) this.readBy.delete(read, name);
      this.reads.deleteAll(name);
      for (const by of this.readBy.get(name)) queue.push(by);
    }
    return gone;
  }

  /** `ttl`: the TTL of the hop asking, for an external name's addresses. */
  private answerAt(name: string, ttl: number): GatewayAnswer {
    const claims = this.accepted.byName.get(name);
    if (claims === undefined) return this.external(name, ttl);
    const known = this.kept.get(name);
    if (known !== undefined) return known;
    const none: GatewayAnswer = { chain: NO_CHAIN, owner: name, v4: [], v6: [], ttl: NO_ANSWER_TTL, weights: undefined };
    // A loop has no addresses: it is left unserved, and said to be a loop, naming its names.
    if (this.pending.has(name)) {
      const chain = [...this.pending];
      return { ...none, why: `is in a CNAME loop: ${[...chain.slice(chain.indexOf(name)), name].join(' → ')}` };
    }
    // Followed no deeper than MAX_DEPTH: a tenant's chain of thousands of names must not exhaust
    // the stack. Cut there, the names on the way are not kept, as their own chains may be short
    // enough: each is answered in full when asked for itself.
    if (this.pending.size > MAX_DEPTH) {
      this.cuts += 1;
      return { ...none, why: `has a CNAME chain of more than ${MAX_DEPTH} names` };
    }
    const cutsBefore = this.cuts;
    this.pending.add(name);
    let result: GatewayAnswer;
    try {
      result = this.compute(name, claims, none);
    } finally {
      this.pending.delete(name);
    }
    const cut = this.cuts !== cutsBefore;
    const answer = cut ? { ...none, why: `has a CNAME chain of more than ${MAX_DEPTH} names` } : result.chain.length > MAX_CHAIN ? { ...none, why: `has a CNAME chain of ${result.chain.length} links, more than ${MAX_CHAIN}` } : result;
    if (!cut || this.pending.size === 0) this.kept.set(name, answer);
    return answer;
  }

  private unfollowed(name: string): string {
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      const wildcard = `*.${name.slice(dot + 1)}`;
      if (this.accepted.byName.has(wildcard)) return `${name} is answered only by the wildcard ${wildcard}, and a CNAME is not followed into a wildcard`;
    }
    return `${name} is in a gateway zone and no Gateway name serves it`;
  }

  private external(name: string, ttl: number): GatewayAnswer {
    if (this.outside?.of !== this.accepted.external) this.outside = { of: this.accepted.external, names: new Set(this.accepted.external) };
    // A target in a zone that no Gateway name serves: lbdns follows a chain through the names it serves only (a node's name in the zone, or a
    // name only a wildcard answers, is not followed), and CoreDNS answers anything else there NXDOMAIN from the zone file, whatever the upstream says.
    if (!this.outside.names.has(name)) return { chain: NO_CHAIN, owner: name, v4: [], v6: [], ttl, weights: undefined, why: this.unfollowed(name) };
    const r = this.resolutions.get(name);
    this.externals.set(name, r);
    if (r === undefined) return { chain: NO_CHAIN, owner: name, v4: [], v6: [], ttl, weights: undefined };
    const kept = externalAnswers.get(r);
    if (kept?.ttl === ttl) return kept;
    const answer = { chain: NO_CHAIN, owner: name, v4: r.v4, v6: r.v6, ttl, weights: undefined };
    externalAnswers.set(r, answer);
    return answer;
  }

  private compute(name: string, claims: readonly Claim[], none: GatewayAnswer): GatewayAnswer {
    const claimed = claims.map((c) => c.endpoint);
    if ((claimed[0] as GatewayEndpoint).recordType !== 'CNAME') {
      const endpoints = [...drained(claimed.filter((e) => e.recordType === 'A')), ...drained(claimed.filter((e) => e.recordType === 'AAAA'))];
      const { v4, v6 } = splitFamilies(endpoints.flatMap((e) => e.targets));
      const weighted = endpoints.some((e) => e.weight !== undefined);
      const weights = weighted ? new Map(endpoints.flatMap((e) => e.targets.map((t): [string, number] => [t, e.weight ?? 1]))) : undefined;
      return { chain: NO_CHAIN, owner: name, v4, v6, ttl: Math.min(...endpoints.map((e) => e.ttl)), weights };
    }
    let set: readonly GatewayEndpoint[] = claimed;
    if (set.some((e) => e.geo !== undefined)) {
      const wanted = this.geos.flatMap((geo) => set.filter((e) => e.geo?.toLowerCase() === geo));
      set = wanted.length > 0 ? wanted.slice(0, 1) : set.filter((e) => e.geo === '*').slice(0, 1);
      if (set.length === 0) {
        const why = this.geoCode === undefined ? `${name} has no default geo (*) and --geo-code is not set` : `${name} has neither ${this.geos.length === 1 ? `geo ${this.geoCode}` : `any of the geos ${this.geoCode.split(',').join(', ')}`} nor a default geo (*)`;
        return { ...none, why };
      }
    }
    set = drained(set);
    const reads = set.map((e) => e.targets[0] as string);
    for (const read of reads) {
      this.reads.add(name, read);
      this.readBy.add(read, name);
    }
    const namespace = (claims[0] as Claim).owner.namespace;
    // A chain whose next name its own namespace lost to another's (a derived `klb.` name taken by
    // an older owner) would answer that namespace's addresses: the name is not served instead.
    const follow = (read: string, ttl: number): GatewayAnswer =>
      this.accepted.lostBy.get(read)?.has(namespace)
        ? { chain: NO_CHAIN, owner: read, v4: [], v6: [], ttl, weights: undefined, why: `leads to ${read}, which namespace ${namespace} asked for too and which is served for the older ${this.accepted.byName.get(read)?.[0]?.owner.source ?? 'owner'}` }
        : this.answerAt(read, ttl);
    return cnameAnswer(name, set, set.map((e, i) => follow(reads[i] as string, e.ttl)));
  }
}

/** A weighted set without its targets of weight 0, as Kuadrant's plugin never picks one while another weighs more; a set all of 0 whole. */
function drained(set: readonly GatewayEndpoint[]): readonly GatewayEndpoint[] {
  return set.length > 1 && set.some((e) => (e.weight ?? 1) > 0) ? set.filter((e) => e.weight !== 0) : set;
}

/** One target: a CNAME hop to its answer. Several (a weighted set): all their addresses at this name. */
function cnameAnswer(name: string, set: readonly GatewayEndpoint[], targets: readonly GatewayAnswer[]): GatewayAnswer {
  const ttl = Math.min(...set.map((e) => e.ttl));
  if (set.length === 1) {
    const rest = targets[0] as GatewayAnswer;
    // Written out, not spread: a spread copy is a larger object, and a spread array keeps room
    // for more hops (concat's is exact); there is one of each per chained name.
    const hop = { chain: [{ owner: name, target: (set[0] as GatewayEndpoint).targets[0] as string, ttl }].concat(rest.chain), owner: rest.owner, v4: rest.v4, v6: rest.v6, ttl: rest.ttl, weights: rest.weights };
    return rest.why === undefined ? hop : { ...hop, why: rest.why };
  }
  const weights = new Map<string, number>();
  const v4 = new Set<string>();
  const v6 = new Set<string>();
  set.forEach((e, i) => {
    const sub = targets[i] as GatewayAnswer;
    for (const ip of sub.v4) v4.add(ip);
    for (const ip of sub.v6) v6.add(ip);
    for (const ip of [...sub.v4, ...sub.v6]) weights.set(ip, Math.max(weights.get(ip) ?? 0, e.weight ?? 1));
  });
  return { chain: NO_CHAIN, owner: name, ...splitFamilies([...v4, ...v6]), ttl, weights };
}

/** CoreDNS reads weights 1–255 (a 0 makes its pick divide by zero): larger sets are scaled down, 0 (a set all of 0) becomes 1. */
export function coreDnsWeights(owner: string, weights: ReadonlyMap<string, number>): WeightBlock {
  const max = Math.max(...weights.values());
  const scale = max > 255 ? 255 / max : 1;
  return { owner, weights: [...weights].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([ip, w]) => ({ ip, weight: Math.min(255, Math.max(1, Math.round(w * scale))) })) };
}
