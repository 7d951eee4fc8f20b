import { applyClusterData, lbDisagreements, type LbDisagreement, type LocalSays } from '../sources/cluster-data.js';
import type { ClusterSources } from '../sources/cluster-sources.js';
import { apiIntRollout, type ApiIntRollout } from '../sources/hosted-net-services.js';
import { KubeAccessError, KubeError, MissingDataError, type ResolveError } from '../errors.js';
import { clusterHostnamesOf, hostnamesOf, hostnamesServing } from '../resolve/gather.js';
import type { Logger } from './log.js';
import type { ApiIntGate } from './api-int-gate.js';
import { ROLE_TRAITS, type ClusterSpec, type ExtraRecord, type LbName, type NameRecord, type NodeApiInt, type RecordSet, type Resolution, type VipOwners } from '../model.js';
import { addressesOf, buildRecordSet, lbRecordName, type RecordSetResult } from '../resolve/record-set.js';
import type { Refusal } from '../resolve/gateway-names.js';

/** The hostname side: last known good answers, kept fresh by TTL. */
export interface Resolutions {
  setHostnames(hostnames: Iterable<string>): void;
  snapshot(): ReadonlyMap<string, Resolution>;
  settled(only?: readonly string[]): Promise<void>;
  pending(): ReadonlyMap<string, ResolveError>;
  stop(): void;
}

export interface DesiredState {
  readonly spec: ClusterSpec;
  readonly recordSet: RecordSet;
  /** Names with no address, so not served. */
  readonly empty: readonly string[];
  readonly resolutions: ReadonlyMap<string, Resolution>;
  /** The role's required names all have addresses. */
  readonly complete: boolean;
  /** Unmanaged DNSRecords: left to the admin, not served. */
  readonly unmanaged: readonly ExtraRecord[];
  /** Names the cluster says not to serve, and why: forwarded upstream. */
  readonly withheld: readonly { readonly name: string; readonly reason: string }[];
  /** Gateway DNS names served and refused. */
  readonly gateway: RecordSetResult['gateway'];
  readonly notes: RecordSetResult['notes'];
  readonly totals: RecordSetResult['totals'];
  /** Names served with what they served before (last known good), and why. */
  readonly held: RecordSetResult['held'];
  /** On-prem with a HostedNetServices object: which Nodes answer api-int where it is asked to be. */
  readonly apiIntRollout?: ApiIntRollout;
  /** On-prem with a HostedNetServices object: its `status.nodes` as last read. */
  readonly apiIntReported?: readonly NodeApiInt[];
  /** On-prem with a HostedNetServices object: the VIP owners its status names, as last read. */
  readonly vipOwners?: VipOwners;
  /** On-prem with a HostedNetServices object: the generation of the spec this state follows. */
  readonly switchesGeneration?: number;
}

export interface MonitorOptions {
  /** The spec from flags and config file; cluster data fills what it does not say. */
  readonly local: ClusterSpec;
  readonly localSays: LocalSays;
  readonly sources: ClusterSources | undefined;
  readonly resolutions: Resolutions;
  readonly log: Logger;
  /**
   * Called with each new desired state, one call at a time, once the first complete state
   * exists. Resolves false when the state did not reach disk: what is served, the last known
   * good of a name that loses its addresses, stays what the files hold.
   */
  readonly sink: (state: DesiredState) => Promise<boolean | void>;
  /** Names that must have addresses for a state to be complete; default: the role's (requiredNames). */
  readonly required?: (spec: ClusterSpec) => string[];
  /**
   * A check each new state must pass, run before the record set is built so its error (a
   * typed one, naming what is wrong) is the one reported: update-infra-status names the
   * status list over the 16-IP limit rather than the DNS name.
   */
  readonly check?: (spec: ClusterSpec, resolutions: ReadonlyMap<string, Resolution>) => void;
  /** On-prem: the address asked for api-int is served only once verified (see ApiIntGate). */
  readonly apiInt?: ApiIntGate;
  /** Told of each new disagreement between an LB's published addresses and the served ones, once. */
  readonly onDisagreement?: (d: LbDisagreement) => void;
  /** A Gateway name refused, once per appearance (it is logged here). */
  readonly onRefused?: (refusal: Refusal) => void;
  /** The names the files on disk served at the start: see BuildOptions.servedBefore. */
  readonly servedBefore?: readonly NameRecord[];
  /** How long after a start with `servedBefore` a name keeps it besides what resolved (BuildOptions.holdUnresolved); default RESTART_HOLD_MS. */
  readonly restartHoldMs?: number;
  /**
   * A one-shot command's single state waits for every hostname's first answer, tenants' CNAME
   * targets included (within its --wait-timeout), and a name over the address limit fails it; a
   * long-running monitor waits only for those of the cluster's own names, and leaves such a
   * name out (or holds what it served) rather than stop every write.
   */
  readonly oneShot?: boolean;
}

/** whenComplete() gave up because the monitor was stopped. */
class MonitorStopped extends Error {
  constructor() {
    super('stopped before the state was complete');
  }
}

const DEBOUNCE_MS = 10;
const MAX_WAIT_MS = 250;
/** Long enough for a host name failing at a restart to answer again after the resolver's retries; short enough that an LB deleted meanwhile does not keep its old addresses. */
const RESTART_HOLD_MS = 5 * 60_000;

/** Names a role (ROLE_TRAITS), or a command asking for `lbs`, cannot work without, unless the cluster leaves them to other DNS servers. */
export function requiredNames(spec: ClusterSpec, lbs: readonly LbName[] = ROLE_TRAITS[spec.role].requires): string[] {
  return lbs.filter((lb) => spec.withheld?.[lb] === undefined).map((lb) => lbRecordName(lb, spec.domain));
}

/**
 * sources → spec → resolutions → desired state → sink. Recomputes on every change from
 * either side, debounced; the sink decides what to write. Until the first complete state
 * nothing reaches the sink, so a starting monitor never replaces a good Corefile with a
 * partial one; after that every change does, because only the API removes a name.
 */
export class Monitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private dirty = false;
  private stopped = false;
  /** The record set last written by the sink: what is being served. */
  private served: RecordSet | undefined;
  /** What the files served at the start, until `served` replaces it (then let go: it is every Gateway name). */
  private servedBefore: readonly NameRecord[] | undefined;
  /** Set while a restart's hold lasts (BuildOptions.holdUnresolved); its end recomputes. */
  private restartHold: NodeJS.Timeout | undefined;
  /** When the first event of the pending burst arrived. */
  private firstScheduled: number | undefined;
  private latest: DesiredState | undefined;
  /** Why the last computation failed; cleared by the next one that succeeds. */
  private failure: unknown;
  private readonly waiters = new Set<{ check(): void; cancel(): void }>();
  /** The withheld names last logged, so a change is logged once. */
  private withheldLogged: string | undefined;
  /** Disagreements already reported, so each is logged and counted once. */
  private disagreementsSeen = new Set<string>();

  private local: ClusterSpec;
  /** Refusals of the last computation, so each is logged once while it lasts. */
  private refused = new Set<string>();

  private readonly opts: Omit<MonitorOptions, 'servedBefore'>;

  constructor({ servedBefore, ...opts }: MonitorOptions) {
    // Not kept in opts, which lives as long as the monitor.
    this.opts = opts;
    this.local = opts.local;
    this.servedBefore = servedBefore;
    if (servedBefore !== undefined && servedBefore.length > 0) {
      this.restartHold = setTimeout(() => {
        this.restartHold = undefined;
        this.schedule();
      }, opts.restartHoldMs ?? RESTART_HOLD_MS);
      this.restartHold.unref();
    }
  }

  /** The local inputs changed (resolv.conf was rewritten): recompute with the new spec. */
  updateLocal(spec: ClusterSpec): void {
    this.local = spec;
    this.schedule();
  }

  /**
   * Something changed: recompute soon. A burst of events is coalesced into one computation
   * (debounce), but a stream that never pauses still gets one at least every MAX_WAIT_MS.
   */
  schedule(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.firstScheduled ??= Date.now();
    const wait = Math.min(DEBOUNCE_MS, Math.max(0, this.firstScheduled + MAX_WAIT_MS - Date.now()));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), wait);
  }

  /**
   * Resolves with the first complete state; rejects naming what is missing after `timeoutMs`,
   * or at once when a source not yet read was denied access (waiting will not grant an RBAC
   * rule) or when the data cannot make a state (over a limit): a one-shot reports that
   * reason, not a timeout.
   */
  async whenComplete(timeoutMs: number): Promise<DesiredState> {
    const done = () => (this.latest?.complete && this.synced() && (this.opts.apiInt?.settled() ?? true) ? this.latest : undefined);
    const first = done();
    if (first) return first;
    const firstDenied = this.accessDenied() ?? this.failure;
    if (firstDenied) throw firstDenied;
    return new Promise<DesiredState>((resolve, reject) => {
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        outcome();
      };
      const waiter = {
        check: () => {
          const state = done();
          const denied = state ? undefined : (this.accessDenied() ?? this.failure);
          if (state) settle(() => resolve(state));
          else if (denied) settle(() => reject(denied));
        },
        cancel: () => settle(() => reject(new MonitorStopped())),
      };
      const timer = setTimeout(() => {
        const message = `after ${Math.round(timeoutMs / 1000)}s still missing: ${this.missing().join('; ')}`;
        // Sources not read at all mean the API server did not answer, not that the cluster lacks the data.
        const unread = (this.opts.sources?.unsynced() ?? []).length > 0;
        settle(() => reject(unread ? new KubeError(message) : new MissingDataError(message)));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** A source failed to list or watch: a waiter may now have to give up. */
  sourceFailed(): void {
    this.notifyWaiters();
  }

  /** The LB host names whose names are served with what they served before: a failing one of them still serves its last known good. */
  heldHostnames(): ReadonlySet<string> {
    const state = this.latest;
    // A name dropped over the limit is not served at all.
    return state === undefined ? new Set() : hostnamesServing(state.spec, new Set(state.held.filter((h) => h.dropped !== true).map((h) => h.name)));
  }

  /** Human-readable list of what keeps the state incomplete. */
  missing(): string[] {
    const out: string[] = [];
    for (const u of this.opts.sources?.unsynced() ?? []) out.push(`${u.source} not read yet${u.error ? ` (${u.error.message})` : ''}`);
    if (this.opts.apiInt?.settled() === false) out.push(`${this.opts.apiInt.describe()} (the move's first check)`);
    const state = this.latest;
    if (state) {
      const pending = this.opts.resolutions.pending();
      for (const name of this.required(state.spec).filter((n) => state.empty.includes(n))) {
        const hosts = hostnamesOf(state.spec).filter((h) => pending.has(h));
        out.push(`${name} has no address${hosts.length ? ` (unresolved: ${hosts.map((h) => `${h}: ${pending.get(h)?.reason}`).join(', ')})` : ''}`);
      }
    }
    return out.length > 0 ? out : ['nothing'];
  }

  /** On-prem: what decides where api-int points (see ApiIntGate); undefined elsewhere. */
  get apiInt(): ApiIntGate | undefined {
    return this.opts.apiInt;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.opts.apiInt?.stop();
    clearTimeout(this.timer);
    clearTimeout(this.restartHold);
    for (const waiter of [...this.waiters]) waiter.cancel();
    this.opts.resolutions.stop();
    await this.opts.sources?.stop();
    await this.running;
  }

  private required(spec: ClusterSpec): string[] {
    return this.opts.required?.(spec) ?? requiredNames(spec);
  }

  private accessDenied(): KubeAccessError | undefined {
    return this.opts.sources?.unsynced().find((u) => u.error instanceof KubeAccessError)?.error as KubeAccessError | undefined;
  }

  private reportDisagreements(found: readonly LbDisagreement[]): void {
    const now = new Set<string>();
    for (const d of found) {
      const key = JSON.stringify(d);
      now.add(key);
      if (this.disagreementsSeen.has(key)) continue;
      this.opts.log.warn("the Infrastructure status publishes other addresses for an LB than its LB config gives; serving the LB config's", { lb: d.lb, served: d.served, published: d.published });
      this.opts.onDisagreement?.(d);
    }
    this.disagreementsSeen = now;
  }

  private notifyWaiters(): void {
    for (const waiter of [...this.waiters]) waiter.check();
  }

  private synced(): boolean {
    return this.opts.sources?.synced() ?? true;
  }

  private run(): void {
    this.firstScheduled = undefined;
    // Marked running before compute() starts: its synchronous part can itself call
    // schedule() (a dropped hostname fires onChange), which must then only set `dirty`.
    let finished: () => void = () => undefined;
    this.running = new Promise<void>((resolve) => {
      finished = resolve;
    });
    this.compute()
      .then(() => {
        this.failure = undefined;
      })
      .catch((err: unknown) => {
        this.failure = err;
        this.opts.log.error('recomputing the desired state failed; keeping what was last written', { error: (err as Error).message });
        this.notifyWaiters();
      })
      .finally(() => {
        this.running = undefined;
        finished();
        if (this.dirty && !this.stopped) {
          this.dirty = false;
          this.schedule();
        }
      });
  }

  private reportRefusals(refusals: readonly Refusal[]): void {
    const now = new Set<string>();
    for (const r of refusals) {
      const key = `${r.name} ${r.source} ${r.reason}`;
      now.add(key);
      if (this.refused.has(key)) continue;
      this.opts.log.warn('gateway name refused; not served', { name: r.name, source: r.source, reason: r.reason, detail: r.detail });
      this.opts.onRefused?.(r);
    }
    this.refused = now;
  }

  private async compute(): Promise<void> {
    if (!this.synced()) return;
    const { localSays, sources, resolutions } = this.opts;
    const data = sources?.data();
    const merged = data ? applyClusterData(this.local, data, localSays) : this.local;
    // A flag for api-int wins over the cluster, a move asked in the cluster over the VIP once verified.
    const spec = this.opts.apiInt && data && !localSays.lbs.has('api-int') ? { ...merged, lbs: { ...merged.lbs, 'api-int': this.opts.apiInt.select(data.apiIntAddress, merged.lbs['api-int']) } } : merged;
    resolutions.setHostnames(hostnamesOf(spec));
    // A new hostname of the cluster's own names gets its first answer before the state is
    // built, so replacing one LB hostname by another never serves the name empty in between.
    // Not a tenant's CNAME target: one that never answers would hold every change back by its
    // timeouts, and a Gateway name keeps its previous records while its target is unresolved.
    await resolutions.settled(this.opts.oneShot === true ? undefined : clusterHostnamesOf(spec));
    if (this.stopped) return;
    const snapshot = resolutions.snapshot();
    if (data) this.reportDisagreements(lbDisagreements(data, localSays, (lb) => addressesOf(spec.lbs[lb], snapshot)));
    this.opts.check?.(spec, snapshot);
    const { recordSet, empty, held, withheld, gateway, notes, totals } = buildRecordSet(spec, snapshot, { previous: this.served, servedBefore: this.servedBefore, lasting: this.opts.oneShot !== true, holdUnresolved: this.restartHold !== undefined });
    for (const h of held) this.opts.log.warn(h.dropped ? 'not serving a name over the address limit' : 'serving a name with its previous addresses', { name: h.name, reason: h.reason });
    const withheldKey = JSON.stringify(withheld);
    if (withheldKey !== this.withheldLogged) {
      if (withheld.length > 0) this.opts.log.info('not serving names the cluster leaves to other DNS servers; they are forwarded', { withheld });
      else if (this.withheldLogged !== undefined) this.opts.log.info('serving every name again');
      this.withheldLogged = withheldKey;
    }
    this.reportRefusals(gateway.refused);
    const complete = this.required(spec).every((n) => !empty.includes(n));
    // Against the cluster's Nodes only: a role that does not watch them, or nodes from flags, cannot say "every node".
    const nodeNames = data?.nodes === undefined || localSays.nodes ? [] : spec.nodes.map((n) => n.name);
    const target = localSays.lbs.has('api-int') ? addressesOf(spec.lbs['api-int'], snapshot) : data?.apiIntAddress !== undefined ? [data.apiIntAddress] : addressesOf(merged.lbs['api-int'], snapshot);
    // api-int left to the external DNS (dnsRecordsType External) is answered by no node: there is no rollout to follow.
    const apiIntWithheld = withheld.some((w) => w.name === `api-int.${spec.domain}`);
    const rollout = data?.apiIntReported === undefined || nodeNames.length === 0 || target.length === 0 || apiIntWithheld ? undefined : apiIntRollout(target.join(','), nodeNames, data.apiIntReported);
    this.latest = { spec, recordSet, empty, resolutions: snapshot, complete, unmanaged: data?.unmanaged ?? [], withheld, gateway, notes, totals, held, ...(rollout ? { apiIntRollout: rollout } : {}), ...(data?.apiIntReported === undefined ? {} : { apiIntReported: data.apiIntReported }), ...(data?.vipOwners === undefined ? {} : { vipOwners: data.vipOwners }), ...(data?.switchesGeneration === undefined ? {} : { switchesGeneration: data.switchesGeneration }) };
    this.notifyWaiters();
    if (!complete && this.served === undefined) return;
    if ((await this.opts.sink(this.latest)) === false) return;
    this.served = recordSet;
    this.servedBefore = undefined;
  }
}
