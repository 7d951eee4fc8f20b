import { LIMITS, SERVED_BEFORE, type InvolvedObject, type NameRecord, type Resolution, type WeightBlock } from '../model.js';
import { coreDnsWeights, GatewayAnswers, type AcceptedGatewayNames, type GatewayAnswer, type Refusal } from './gateway-names.js';
import { KeptOrder } from './kept-order.js';
import { countByKind, type ServedTotals } from './source-kind.js';
import { compareSpecificity, specificityOrder } from './specificity.js';

export interface GatewayRecords {
  /** The served records, in specificity order. */
  readonly names: readonly NameRecord[];
  /** Each name served with the objects it comes from, accepted names' order. */
  readonly served: readonly { readonly name: string; readonly source: string }[];
  readonly refused: readonly Refusal[];
  /** Weight blocks by owner. */
  readonly weights: readonly WeightBlock[];
  /** Names served with their previous records, and why. */
  readonly held: readonly { readonly name: string; readonly reason: string }[];
  /** Names with no address and nothing to hold, and why. */
  readonly empty: readonly { readonly name: string; readonly reason: string }[];
  readonly totals: ServedTotals;
}

/** A name with an answer to serve; or one without (no address, over the limit), decided again at every build against what is served. */
type Entry =
  | { readonly kind: 'answered'; readonly record: NameRecord; readonly served: { readonly name: string; readonly source: string }; readonly weightBlock: WeightBlock | undefined }
  /** `lasting`: the problem is the records' own (a loop, no geo, a target not served), not an address not resolved yet: nothing is held for it. */
  | { readonly kind: 'unanswered'; readonly source: string; readonly regarding: InvolvedObject | undefined; readonly count: number; readonly problem: string; readonly lasting: boolean };

function made(name: string, source: string, answer: GatewayAnswer): Entry & { kind: 'answered' } {
  const chained = answer.chain.length > 0;
  // Written out, not spread: one of these per name, and a spread copy is a slower, larger object.
  const record: NameRecord = chained
    ? { name, v4: answer.v4, v6: answer.v6, source, chain: answer.chain, addressOwner: answer.owner, addressTtl: answer.ttl }
    : { name, v4: answer.v4, v6: answer.v6, source, chain: answer.chain, addressTtl: answer.ttl };
  const owner = chained ? answer.owner : name;
  return { kind: 'answered', record, served: { name, source }, weightBlock: answer.weights && !owner.startsWith('*.') ? coreDnsWeights(owner, answer.weights) : undefined };
}

const addressCount = (record: NameRecord | undefined): number => (record === undefined ? 0 : record.v4.length + record.v6.length);

const byOwner = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The Gateway DNS records, kept from one build to the next: a build remakes the entries of
 * the names whose answers changed (GatewayAnswers) and the names without an address, and
 * keeps the records and their order for the rest.
 */
export class GatewayRecordBook {
  private readonly answers: GatewayAnswers;
  private readonly entries = new Map<string, Entry>();
  private readonly problems = new Set<string>();
  private readonly order = new KeptOrder<NameRecord>((n) => n.name, compareSpecificity, specificityOrder);
  private readonly weights = new KeptOrder<WeightBlock>((w) => w.owner, byOwner);
  /** Weight block owner → the names whose answers give it. */
  private readonly weightNames = new Map<string, Set<string>>();
  private served: readonly { readonly name: string; readonly source: string }[] | undefined;
  /** The served list's names per source kind, made with it. */
  private servedKinds: ReadonlyMap<string, number> = new Map();
  /** Addresses of the records in order, kept by the changes to it: counting them costs a walk over every record. */
  private addresses = 0;

  constructor(readonly geoCode: string | undefined) {
    this.answers = new GatewayAnswers(geoCode);
  }

  /** `previous`: the record a name was served with, for last known good. */
  build(accepted: AcceptedGatewayNames, resolutions: ReadonlyMap<string, Resolution>, previous: (name: string) => NameRecord | undefined): GatewayRecords {
    const changed = this.answers.update(accepted, resolutions);
    if (changed === undefined) {
      this.entries.clear();
      this.problems.clear();
      this.order.reset([]);
      this.weights.reset([]);
      this.weightNames.clear();
      this.served = undefined;
      this.addresses = 0;
    }
    const touched = changed ?? [...accepted.byName.keys()];
    const remade = [...touched, ...this.problems];
    // Without a served list there is none to keep: it is made again whatever changed.
    const servedBefore = this.served && remade.map((name) => this.servedSource(name));
    const orderChanges = new Map<string, NameRecord | undefined>();
    const weightChanges = new Map<string, WeightBlock | undefined>();
    for (const name of touched) {
      const old = this.entries.get(name);
      if (old?.kind === 'answered' && old.weightBlock !== undefined) this.dropWeight(name, old.weightBlock.owner, weightChanges);
      const claims = accepted.byName.get(name);
      if (claims === undefined) {
        this.entries.delete(name);
        this.problems.delete(name);
        orderChanges.set(name, undefined);
        continue;
      }
      const source = claims.length === 1 ? (claims[0] as (typeof claims)[number]).owner.source : [...new Set(claims.map((c) => c.owner.source))].join(', ');
      const answer = this.answers.answer(name);
      const count = answer.v4.length + answer.v6.length;
      const problem = count > LIMITS.maxIpsPerName ? `has ${count} addresses, more than the limit of ${LIMITS.maxIpsPerName}` : count === 0 ? (answer.why ?? 'has no address yet') : undefined;
      if (problem !== undefined) {
        this.entries.set(name, { kind: 'unanswered', source, regarding: (claims[0] as (typeof claims)[number]).owner.regarding, count, problem, lasting: answer.why !== undefined });
        this.problems.add(name);
        continue;
      }
      const entry = made(name, source, answer);
      this.entries.set(name, entry);
      this.problems.delete(name);
      orderChanges.set(name, entry.record);
      if (entry.weightBlock !== undefined) this.addWeight(name, entry.weightBlock, weightChanges);
    }

    const held: { name: string; reason: string }[] = [];
    const empty: { name: string; reason: string }[] = [];
    const overLimit: Refusal[] = [];
    for (const name of [...this.problems].sort()) {
      const entry = this.entries.get(name) as Entry & { kind: 'unanswered' };
      // Held for the owner it was served for only: another owner's name never answers the addresses of the one that gave it up.
      const before = entry.lasting ? undefined : previous(name);
      const kept = before?.source === entry.source || before?.source === SERVED_BEFORE ? before : undefined;
      if (kept !== undefined) held.push({ name, reason: entry.problem });
      else if (entry.count === 0) empty.push({ name, reason: entry.problem });
      else overLimit.push({ name, source: entry.source, ...(entry.regarding === undefined ? {} : { regarding: entry.regarding }), reason: 'over-limit', detail: entry.problem });
      orderChanges.set(name, kept === undefined || kept.source === entry.source ? kept : { ...kept, source: entry.source });
    }
    for (const [name, record] of orderChanges) this.addresses += addressCount(record) - addressCount(this.order.get(name));
    const names = this.order.update(orderChanges);
    if (servedBefore && remade.some((name, i) => this.servedSource(name) !== servedBefore[i])) this.served = undefined;
    const served = this.servedList(accepted);
    return { names, served, refused: [...accepted.refused, ...overLimit], weights: this.weights.update(weightChanges), held, empty, totals: { names: this.servedKinds, addresses: this.addresses } };
  }

  /** The source a name is served for, if it is served. */
  private servedSource(name: string): string | undefined {
    const entry = this.entries.get(name);
    if (entry?.kind === 'answered') return entry.served.source;
    return entry !== undefined && this.order.get(name) !== undefined ? entry.source : undefined;
  }

  /**
   * The names served, in byName's order: the same list until a name's source or whether it
   * is served changes (names decided again keep their place in byName).
   */
  private servedList(accepted: AcceptedGatewayNames): readonly { readonly name: string; readonly source: string }[] {
    if (this.served !== undefined) return this.served;
    const served: { readonly name: string; readonly source: string }[] = [];
    for (const name of accepted.byName.keys()) {
      const source = this.servedSource(name);
      if (source === undefined) continue;
      const entry = this.entries.get(name);
      served.push(entry?.kind === 'answered' ? entry.served : { name, source });
    }
    this.servedKinds = countByKind(served);
    return (this.served = served);
  }

  private addWeight(name: string, block: WeightBlock, changes: Map<string, WeightBlock | undefined>): void {
    let names = this.weightNames.get(block.owner);
    if (names === undefined) this.weightNames.set(block.owner, (names = new Set()));
    names.add(name);
    changes.set(block.owner, block);
  }

  private dropWeight(name: string, owner: string, changes: Map<string, WeightBlock | undefined>): void {
    const names = this.weightNames.get(owner);
    names?.delete(name);
    if (names?.size === 0) {
      this.weightNames.delete(owner);
      changes.set(owner, undefined);
    }
  }
}
