/**
 * Kubernetes Events for what a cluster admin must act on, so `oc get events` shows it beside
 * the pod. Written by hand: client-node has no event recorder. It does what client-go's
 * does: one Event per distinct occurrence, repeats counted into it by patch (at most one
 * patch per Event per repeat interval, however often it repeats), and a token bucket on new
 * Events so a burst of distinct problems cannot flood the API server.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { httpStatusOf, kubeErrorFrom } from '../kube/api-error.js';
import { sendJson } from '../kube/send-json.js';
import type { InvolvedObject } from '../model.js';
import type { Logger } from './log.js';

/** One reason per thing an admin acts on; docs/operations.md ("Events") lists what to do for each. */
export const EVENT_REASONS = {
  /** A cluster object held data lbdns refused (malformed, or disagreeing with another source). */
  sourceIgnored: 'SourceDataIgnored',
  /** A DNS name an object asked for that it may not claim; not served. */
  nameRefused: 'NameRefused',
  /** An LB host name does not resolve; its last known good addresses are served. */
  hostUnresolvable: 'LBHostUnresolvable',
  /** A watch of the API failed and is retried. */
  watchFailed: 'WatchFailed',
  /** Another DNS server holds the port CoreDNS is to listen on. */
  portInUse: 'CoreDNSPortInUse',
} as const;

export type EventReason = (typeof EVENT_REASONS)[keyof typeof EVENT_REASONS];
export type { InvolvedObject };

export interface ClusterEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: EventReason;
  readonly message: string;
  /** The object concerned; default the lbdns pod. */
  readonly regarding?: InvolvedObject;
}

/** Where the stages report events; the sink decides whether, when and how often they reach the API. */
export interface EventSink {
  emit(event: ClusterEvent): void;
  /** Sends the counts still pending and stops; waits for requests in flight. */
  close(): Promise<void>;
}

export const NO_EVENTS: EventSink = { emit: () => undefined, close: async () => undefined };

/** The pod lbdns runs in, from the downward API (POD_NAME, POD_NAMESPACE); undefined outside a pod. */
export function podFromEnv(env: NodeJS.ProcessEnv): InvolvedObject | undefined {
  const { POD_NAME: name, POD_NAMESPACE: namespace, POD_UID: uid } = env;
  if (!name || !namespace) return undefined;
  return { apiVersion: 'v1', kind: 'Pod', namespace, name, ...(uid ? { uid } : {}) };
}

export interface KubeEventSinkOptions {
  readonly kc: KubeConfig;
  /** Events without `regarding` are about this pod, and written in its namespace. */
  readonly pod: InvolvedObject;
  readonly log: Logger;
  /** `source.host`: the node (NODE_NAME). */
  readonly host?: string | undefined;
  /** Shortest time between two writes of one Event; default 60 s. */
  readonly repeatIntervalMs?: number;
  /** New Events allowed at once; default 25, as client-go. */
  readonly burst?: number;
  /** One more new Event allowed per this long; default 30 s. */
  readonly refillMs?: number;
  /** Distinct Events remembered for counting; default 256. */
  readonly maxKeys?: number;
  readonly now?: () => number;
  /** Longest close() waits for Events still being sent; default 5 s, well inside the kubelet's 30 s grace period. */
  readonly closeWithinMs?: number;
}

interface Entry {
  readonly key: string;
  readonly event: ClusterEvent;
  name: string;
  count: number;
  sentCount: number;
  readonly first: number;
  last: number;
  lastSentAt: number;
  busy: boolean;
  timer: NodeJS.Timeout | undefined;
}

const timestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const MESSAGE_MAX = 1024;

export function kubeEventSink(opts: KubeEventSinkOptions): EventSink {
  return new KubeEventSink(opts);
}

/** Events about the pod named by the downward API (POD_NAME, POD_NAMESPACE, NODE_NAME); none outside a pod. */
export function podEventSink(kc: KubeConfig, log: Logger, env: NodeJS.ProcessEnv = process.env): EventSink {
  const pod = podFromEnv(env);
  return pod === undefined ? NO_EVENTS : kubeEventSink({ kc, pod, log, host: env.NODE_NAME });
}

class KubeEventSink implements EventSink {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly now: () => number;
  private readonly interval: number;
  private readonly burst: number;
  private readonly refill: number;
  private readonly maxKeys: number;
  private tokens: number;
  private refilledAt: number;
  private seq = 0;
  private closed = false;
  private lastError: string | undefined;

  constructor(private readonly opts: KubeEventSinkOptions) {
    this.now = opts.now ?? Date.now;
    this.interval = opts.repeatIntervalMs ?? 60_000;
    this.burst = opts.burst ?? 25;
    this.refill = opts.refillMs ?? 30_000;
    this.maxKeys = opts.maxKeys ?? 256;
    this.tokens = this.burst;
    this.refilledAt = this.now();
  }

  emit(event: ClusterEvent): void {
    if (this.closed) return;
    const regarding = event.regarding ?? this.opts.pod;
    const message = event.message.length > MESSAGE_MAX ? `${event.message.slice(0, MESSAGE_MAX - 1)}…` : event.message;
    const key = JSON.stringify([event.type, event.reason, regarding.kind, regarding.namespace, regarding.name, message]);
    const now = this.now();
    const known = this.entries.get(key);
    if (known) {
      known.count += 1;
      known.last = now;
      // Most recently seen last: eviction drops the Event that repeated longest ago.
      this.entries.delete(key);
      this.entries.set(key, known);
      this.schedulePatch(known);
      return;
    }
    if (!this.takeToken(now)) {
      this.opts.log.debug('event dropped: too many new events', { reason: event.reason, message });
      return;
    }
    const entry: Entry = { key, event: { ...event, message, regarding }, name: this.nameFor(now), count: 1, sentCount: 0, first: now, last: now, lastSentAt: now, busy: true, timer: undefined };
    this.entries.set(key, entry);
    for (const [oldKey, old] of this.entries) {
      if (this.entries.size <= this.maxKeys) break;
      if (old.busy) continue;
      clearTimeout(old.timer);
      this.entries.delete(oldKey);
    }
    this.track(this.create(entry));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.entries.values()) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
      if (!entry.busy && entry.count > entry.sentCount) this.track(this.patch(entry));
    }
    // An API server that takes the connection and never answers must not hold the pod past its grace period.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.opts.closeWithinMs ?? 5000);
    });
    const drained = (async () => {
      while (this.inflight.size > 0) await Promise.all([...this.inflight]);
    })();
    const outcome = await Promise.race([drained, late]);
    clearTimeout(timer);
    if (outcome === 'late') this.opts.log.warn('Events still being sent at shutdown were left unsent: the API server did not answer', { unsent: this.inflight.size });
  }

  private nameFor(now: number): string {
    this.seq += 1;
    return `${this.opts.pod.name}.${(now * 1000 + (this.seq % 1000)).toString(16)}`;
  }

  private takeToken(now: number): boolean {
    const earned = Math.floor((now - this.refilledAt) / this.refill);
    if (earned > 0) {
      this.tokens = Math.min(this.burst, this.tokens + earned);
      this.refilledAt += earned * this.refill;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private track(work: Promise<void>): void {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
  }

  private schedulePatch(entry: Entry): void {
    if (entry.busy || entry.timer !== undefined || this.closed) return;
    const delay = Math.max(0, entry.lastSentAt + this.interval - this.now());
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.track(this.patch(entry));
    }, delay);
    entry.timer.unref();
  }

  /** The API server keeps an Event in the namespace of the object it is about; one about a cluster-scoped object, in the pod's. */
  private namespaceOf(entry: Entry): string {
    return entry.event.regarding?.namespace ?? (this.opts.pod.namespace as string);
  }

  private pathOf(entry: Entry): string {
    return `/api/v1/namespaces/${this.namespaceOf(entry)}/events`;
  }

  private body(entry: Entry): object {
    const { event } = entry;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: this.namespaceOf(entry) },
      involvedObject: event.regarding,
      reason: event.reason,
      message: event.message,
      type: event.type,
      count: entry.count,
      firstTimestamp: timestamp(entry.first),
      lastTimestamp: timestamp(entry.last),
      source: { component: 'lbdns', ...(this.opts.host ? { host: this.opts.host } : {}) },
      reportingComponent: 'lbdns',
      reportingInstance: this.opts.host ?? this.opts.pod.name,
    };
  }

  private async create(entry: Entry): Promise<void> {
    entry.busy = true;
    const count = entry.count;
    try {
      await sendJson(this.opts.kc, 'POST', this.pathOf(entry), this.body(entry));
      entry.sentCount = count;
      entry.lastSentAt = this.now();
      this.sent();
    } catch (err) {
      // Forgotten, so the next occurrence tries again with a new Event.
      this.entries.delete(entry.key);
      this.failed(err, `create event ${entry.name}`);
      return;
    } finally {
      entry.busy = false;
    }
    if (entry.count > entry.sentCount) this.closed ? this.track(this.patch(entry)) : this.schedulePatch(entry);
  }

  private async patch(entry: Entry): Promise<void> {
    entry.busy = true;
    const count = entry.count;
    const patch = { count, lastTimestamp: timestamp(entry.last), message: entry.event.message };
    try {
      await sendJson(this.opts.kc, 'PATCH', `${this.pathOf(entry)}/${entry.name}`, patch, 'application/merge-patch+json');
      entry.sentCount = count;
      entry.lastSentAt = this.now();
      this.sent();
    } catch (err) {
      entry.busy = false;
      // Events expire (an hour by default): count on in a new one.
      if (httpStatusOf(err) === 404) {
        entry.name = this.nameFor(this.now());
        await this.create(entry);
        return;
      }
      this.failed(err, `patch event ${entry.name}`);
      return;
    }
    entry.busy = false;
    if (entry.count > entry.sentCount) this.closed ? this.track(this.patch(entry)) : this.schedulePatch(entry);
  }

  private sent(): void {
    this.lastError = undefined;
  }

  /** Logged once per distinct failure: an API outage must not turn every emit into a log line. */
  private failed(err: unknown, what: string): void {
    const error = kubeErrorFrom(err, what).message;
    const kind = error.replace(/event \S+/, 'event');
    if (kind === this.lastError) return;
    this.lastError = kind;
    this.opts.log.warn('writing an Event failed; the log keeps what it said', { error });
  }
}
