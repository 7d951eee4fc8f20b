import { setMaxListeners } from 'node:events';
import { ResolveError, ValidationError } from '../errors.js';
import { LIMITS, type Resolution } from '../model.js';
import type { HostResolver } from './host-resolver.js';

export interface ResolutionCacheOptions {
  resolver: Pick<HostResolver, 'resolve'>;
  /** Shortest time between two resolutions of a name, whatever its TTL says. Default 5. */
  minRefreshSeconds?: number;
  /** Longest time between two resolutions of a name, before jitter. Default 300. */
  maxRefreshSeconds?: number;
  /**
   * Each delay is stretched by a random 0 … ratio of itself, never shortened. Default 0.1.
   * Never earlier: a caching resolver asked before the TTL runs out answers from its cache
   * with the little TTL that is left, which costs a second query soon after and tells us nothing new.
   */
  jitterRatio?: number;
  /** First delay before asking again after a failure, doubled per failure in a row. Default 1. */
  retryMinSeconds?: number;
  /** Cap of that doubling, before jitter. Default 30. */
  retryMaxSeconds?: number;
  /**
   * A hostname's addresses changed: `before` is undefined on its first answer, `after` is
   * undefined only when `setHostnames` dropped it. Never called for a TTL-only change or a failure.
   */
  onChange: (hostname: string, before: Resolution | undefined, after: Resolution | undefined) => void;
  /**
   * A resolution failed. `keptLastGood` says whether an earlier answer is still being served
   * (the caller logs that loudly: the served addresses may be stale); the cache asks again in `retryInSeconds`.
   */
  onFailure?: (hostname: string, error: ResolveError, keptLastGood: boolean, retryInSeconds: number) => void;
}

type Outcome = { readonly resolution: Resolution } | { readonly error: ResolveError };

interface Entry {
  readonly hostname: string;
  last: Resolution | undefined;
  lastError: ResolveError | undefined;
  failuresInARow: number;
  timer: NodeJS.Timeout | undefined;
  attempted: boolean;
  readonly firstAttempt: Promise<void>;
  readonly markAttempted: () => void;
}

function newEntry(hostname: string): Entry {
  let markAttempted = (): void => undefined;
  const firstAttempt = new Promise<void>((resolve) => {
    markAttempted = resolve;
  });
  const entry: Entry = {
    hostname,
    last: undefined,
    lastError: undefined,
    failuresInARow: 0,
    timer: undefined,
    attempted: false,
    firstAttempt,
    markAttempted: () => {
      entry.attempted = true;
      markAttempted();
    },
  };
  return entry;
}

function sameAddresses(a: Resolution | undefined, b: Resolution): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((ip, i) => ip === y[i]);
  return a !== undefined && same(a.v4, b.v4) && same(a.v6, b.v6);
}

function seconds(field: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min || value > LIMITS.maxTtl) {
    throw new ValidationError(field, value, `must be a number of seconds from ${min} to ${LIMITS.maxTtl}`);
  }
  return value;
}

/**
 * Keeps a set of load balancer hostnames resolved for as long as it runs, re-resolving each
 * when its answer's TTL runs out, so drifting LB addresses are followed without polling the API.
 *
 * A failed resolution never removes an answer: SERVFAIL, timeouts and refusals are outages of
 * the path to DNS, and NXDOMAIN/NODATA for a name that resolved before is as likely a
 * misconfigured resolver as a deleted LB. Serving the last good addresses is harmless in the
 * second case (they no longer work either way) and keeps the cluster reachable in the first.
 * Only `setHostnames` — fed from the API, where a deleted or replaced LB disappears from the
 * Service status — removes a hostname.
 *
 * One timer per hostname: Node keeps timers in per-duration lists under a binary heap, so a few
 * hundred of them cost nothing, and per-name timers keep cancel-on-remove trivial. The timers
 * are not unref()'d: this cache is what keeps the monitor following DNS; if it let the process
 * exit whenever nothing else was pending (e.g. while a watch reconnects), the monitor would stop
 * silently. Its lifetime ends explicitly with `stop()`.
 */
export class ResolutionCache {
  private readonly resolver: Pick<HostResolver, 'resolve'>;
  private readonly minRefresh: number;
  private readonly maxRefresh: number;
  private readonly jitterRatio: number;
  private readonly retryMin: number;
  private readonly retryMax: number;
  private readonly onChange: ResolutionCacheOptions['onChange'];
  private readonly onFailure: ResolutionCacheOptions['onFailure'];
  private readonly entries = new Map<string, Entry>();
  /** Outlives its entry, so a name dropped and re-added mid-query waits for that query instead of sending a second one. */
  private readonly inFlight = new Map<string, Promise<Outcome>>();
  private readonly stopping = new AbortController();
  private stopped = false;

  constructor(opts: ResolutionCacheOptions) {
    // Every query in flight listens on this one signal; a hundred LB names is normal.
    setMaxListeners(0, this.stopping.signal);
    this.resolver = opts.resolver;
    this.minRefresh = seconds('minRefreshSeconds', opts.minRefreshSeconds ?? 5, 0.001);
    this.maxRefresh = seconds('maxRefreshSeconds', opts.maxRefreshSeconds ?? 300, this.minRefresh);
    this.retryMin = seconds('retryMinSeconds', opts.retryMinSeconds ?? 1, 0.001);
    this.retryMax = seconds('retryMaxSeconds', opts.retryMaxSeconds ?? 30, this.retryMin);
    const jitter = opts.jitterRatio ?? 0.1;
    if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1) {
      throw new ValidationError('jitterRatio', jitter, 'must be a number from 0 to 1');
    }
    this.jitterRatio = jitter;
    this.onChange = opts.onChange;
    this.onFailure = opts.onFailure;
  }

  /**
   * The hostnames to keep resolved: new ones are resolved at once, dropped ones forgotten (their
   * timers cleared, a late answer ignored) with `onChange(hostname, last, undefined)` if they had
   * an answer. Names are kept exactly as given. After `stop()` this does nothing.
   */
  setHostnames(hostnames: Iterable<string>): void {
    if (this.stopped) return;
    const wanted = new Set(hostnames);
    const dropped: Resolution[] = [];
    for (const entry of [...this.entries.values()]) {
      if (wanted.has(entry.hostname)) continue;
      this.forget(entry);
      if (entry.last) dropped.push(entry.last);
    }
    for (const hostname of wanted) {
      if (this.entries.has(hostname)) continue;
      const entry = newEntry(hostname);
      this.entries.set(hostname, entry);
      this.refresh(entry);
    }
    for (const last of dropped) this.onChange(last.hostname, last, undefined);
  }

  /** The last good answer of every current hostname that ever resolved: what the record set is built from. */
  snapshot(): ReadonlyMap<string, Resolution> {
    const out = new Map<string, Resolution>();
    for (const entry of this.entries.values()) if (entry.last) out.set(entry.hostname, entry.last);
    return out;
  }

  /** Resolves once every current hostname, including ones added meanwhile, has had its first attempt, successful or not. */
  /** Every current hostname (of `only`, when given) has had its first attempt. */
  async settled(only?: readonly string[]): Promise<void> {
    for (;;) {
      const entries = only === undefined ? [...this.entries.values()] : only.flatMap((h) => this.entries.get(h) ?? []);
      const waiting = entries.filter((entry) => !entry.attempted);
      if (waiting.length === 0) return;
      await Promise.all(waiting.map((entry) => entry.firstAttempt));
    }
  }

  /** Current hostnames whose latest attempt failed, and whether an earlier answer is still served. */
  failing(): { readonly hostname: string; readonly keptLastGood: boolean }[] {
    return [...this.entries.values()].filter((entry) => entry.lastError).map((entry) => ({ hostname: entry.hostname, keptLastGood: entry.last !== undefined }));
  }

  /** Current hostnames that never resolved, with the error of their latest attempt. */
  pending(): ReadonlyMap<string, ResolveError> {
    const out = new Map<string, ResolveError>();
    for (const entry of this.entries.values()) if (!entry.last && entry.lastError) out.set(entry.hostname, entry.lastError);
    return out;
  }

  /**
   * Clears every timer and forgets every hostname, without calling `onChange`. Queries in
   * flight are cancelled, so nothing of the cache keeps the process alive afterwards.
   */
  stop(): void {
    this.stopped = true;
    this.stopping.abort();
    for (const entry of [...this.entries.values()]) this.forget(entry);
  }

  private forget(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    this.entries.delete(entry.hostname);
    // Nobody waits forever in settled() for a name that is gone.
    entry.markAttempted();
  }

  private refresh(entry: Entry): void {
    entry.timer = undefined;
    const { hostname } = entry;
    let query = this.inFlight.get(hostname);
    if (!query) {
      const started = this.query(hostname);
      query = started;
      this.inFlight.set(hostname, started);
      // Registered before the entry's own handler below, so the slot is free by the time that schedules the next query.
      void started.then(() => {
        if (this.inFlight.get(hostname) === started) this.inFlight.delete(hostname);
      });
    }
    // A throwing callback surfaces as an unhandled rejection; the state and the next timer are set before callbacks run.
    void query.then((outcome) => this.settle(entry, outcome));
  }

  private async query(hostname: string): Promise<Outcome> {
    try {
      return { resolution: await this.resolver.resolve(hostname, this.stopping.signal) };
    } catch (err) {
      if (err instanceof ResolveError) return { error: err };
      const message = err instanceof Error ? err.message : String(err);
      return { error: new ResolveError(hostname, 'OTHER', `the resolver failed unexpectedly: ${message}`, { cause: err }) };
    }
  }

  private settle(entry: Entry, outcome: Outcome): void {
    // Dropped (or stopped) while the query was out: the answer belongs to no one.
    if (this.entries.get(entry.hostname) !== entry) return;
    if ('resolution' in outcome) {
      const before = entry.last;
      const after = outcome.resolution;
      entry.last = after;
      entry.lastError = undefined;
      entry.failuresInARow = 0;
      this.schedule(entry, this.jittered(Math.min(Math.max(after.ttlSeconds, this.minRefresh), this.maxRefresh)));
      entry.markAttempted();
      if (!sameAddresses(before, after)) this.onChange(entry.hostname, before, after);
      return;
    }
    entry.lastError = outcome.error;
    entry.failuresInARow += 1;
    const retryIn = this.jittered(Math.min(this.retryMin * 2 ** (entry.failuresInARow - 1), this.retryMax));
    this.schedule(entry, retryIn);
    entry.markAttempted();
    this.onFailure?.(entry.hostname, outcome.error, entry.last !== undefined, retryIn);
  }

  private schedule(entry: Entry, delaySeconds: number): void {
    entry.timer = setTimeout(() => this.refresh(entry), delaySeconds * 1000);
  }

  /** Spreads names that share a TTL so they are not all asked in the same instant. */
  private jittered(baseSeconds: number): number {
    return baseSeconds * (1 + this.jitterRatio * Math.random());
  }
}
