import type { Resolver } from 'node:dns/promises';
import pRetry, { AbortError } from 'p-retry';
import { ResolveError, type ResolveFailure } from '../errors.js';
import { parseDnsServer } from '../grammar/host-port.js';
import { canonicalIp, sortUniqueIps } from '../grammar/ip.js';
import type { Resolution } from '../model.js';

export type RecordFamily = 'A' | 'AAAA';

/** The failures worth asking again: the server or the path to it may recover. */
export type TransientFailure = Extract<ResolveFailure, 'SERVFAIL' | 'TIMEOUT' | 'REFUSED'>;

export interface RetryInfo {
  readonly hostname: string;
  readonly family: RecordFamily;
  readonly reason: TransientFailure;
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
}

export interface ResolverOptions {
  /** 'IP', 'IP:PORT', '[IPv6]:PORT'. Default (undefined or empty): the system's resolvers. A function is asked at each resolution: the servers may change (resolv.conf). */
  servers?: readonly string[] | (() => readonly string[] | undefined);
  /** Per attempt. Default 2000. */
  timeoutMs?: number;
  /** How many times a transient failure (SERVFAIL, timeout, refused) is retried with backoff. Default 3. */
  retries?: number;
  /** First backoff delay, doubled on each further retry. Default 200. */
  minRetryDelayMs?: number;
  /** Called before each retry, e.g. to count failures by reason. */
  onRetry?: (info: RetryInfo) => void;
}

/** Node's DNS error codes for a failure a retry may cure, by the reason lbdns reports: the one map for resolving and for check-dns. */
export const TRANSIENT_DNS_ERRORS: ReadonlyMap<string, { readonly reason: TransientFailure; readonly detail?: string }> = new Map([
  ['ESERVFAIL', { reason: 'SERVFAIL' }],
  ['ETIMEOUT', { reason: 'TIMEOUT' }],
  ['ECONNREFUSED', { reason: 'REFUSED', detail: 'nothing listening' }],
  ['EREFUSED', { reason: 'REFUSED' }],
]);

export function dnsErrorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

function attempts(n: number): string {
  return n === 1 ? '1 attempt' : `${n} attempts`;
}

interface FamilyAnswer {
  readonly ips: string[];
  readonly ttls: number[];
}

/**
 * Resolves load balancer hostnames to every A and AAAA address they have. Each call uses
 * its own c-ares channel and cancels it when done, so no query outlives the call and a
 * finished call never keeps the process alive.
 */
export class HostResolver {
  private readonly servers: () => readonly string[] | undefined;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly minRetryDelayMs: number;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;

  constructor(opts: ResolverOptions = {}) {
    const given = opts.servers;
    if (typeof given === 'function') {
      this.servers = () => {
        const now = given();
        return now && now.length > 0 ? now.map(parseDnsServer) : undefined;
      };
    } else {
      const fixed = given && given.length > 0 ? given.map(parseDnsServer) : undefined;
      this.servers = () => fixed;
    }
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.retries = opts.retries ?? 3;
    this.minRetryDelayMs = opts.minRetryDelayMs ?? 200;
    this.onRetry = opts.onRetry;
  }

  /**
   * A and AAAA in parallel; fails as a whole when either family fails, so no address is silently lost.
   * Aborting `signal` cancels the queries in flight and any pending retry: a stopping monitor
   * must not wait out a DNS timeout (with retries, about ten seconds) before it can exit.
   */
  async resolve(hostname: string, signal?: AbortSignal): Promise<Resolution> {
    signal?.throwIfAborted();
    // tries: 1 because retries (with backoff and per-reason accounting) are ours.
    // Loaded on first use: a render from IP literals resolves nothing.
    const { Resolver } = await import('node:dns/promises');
    const resolver = new Resolver({ timeout: this.timeoutMs, tries: 1 });
    const servers = this.servers();
    if (servers) resolver.setServers(servers);
    const asked = resolver.getServers().join(', ') || 'the system resolvers';
    const stop = new AbortController();
    const cancel = () => {
      stop.abort();
      resolver.cancel();
    };
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.all([
        this.resolveFamily(resolver, hostname, 'A', asked, stop.signal),
        this.resolveFamily(resolver, hostname, 'AAAA', asked, stop.signal),
      ]);
      if (v4.ips.length === 0 && v6.ips.length === 0) {
        throw new ResolveError(hostname, 'NODATA', `${asked} returned no usable A or AAAA record, 1 attempt per family (not retried); the load balancer may not have addresses yet`);
      }
      return { hostname, v4: sortUniqueIps(v4.ips), v6: sortUniqueIps(v6.ips), ttlSeconds: Math.min(...v4.ttls, ...v6.ttls) };
    } finally {
      signal?.removeEventListener('abort', cancel);
      cancel();
    }
  }

  private resolveFamily(resolver: Resolver, hostname: string, family: RecordFamily, asked: string, signal: AbortSignal): Promise<FamilyAnswer> {
    let lastAttempt = 0;
    const attempt = async (n: number): Promise<FamilyAnswer> => {
      lastAttempt = n;
      try {
        const records = family === 'A' ? await resolver.resolve4(hostname, { ttl: true }) : await resolver.resolve6(hostname, { ttl: true });
        // Only plain IP literals may reach a Corefile or the Infrastructure status.
        const kept = records.flatMap((r) => {
          const ip = canonicalIp(r.address);
          return ip === null ? [] : [{ ip, ttl: r.ttl }];
        });
        return { ips: kept.map((r) => r.ip), ttls: kept.map((r) => r.ttl) };
      } catch (err) {
        const code = dnsErrorCode(err);
        if (code === 'ENODATA') return { ips: [], ttls: [] };
        if (TRANSIENT_DNS_ERRORS.has(code)) throw err;
        throw new AbortError(this.fatal(hostname, family, code, err, asked, n));
      }
    };
    return pRetry(attempt, {
      retries: this.retries,
      minTimeout: this.minRetryDelayMs,
      factor: 2,
      signal,
      shouldRetry: ({ error, attemptNumber }) => {
        if (signal.aborted) return false;
        const reason = TRANSIENT_DNS_ERRORS.get(dnsErrorCode(error))?.reason;
        if (reason !== undefined) this.onRetry?.({ hostname, family, reason, attempt: attemptNumber });
        return true;
      },
    }).catch((err: unknown) => {
      if (err instanceof ResolveError || signal.aborted) throw err;
      throw this.transient(hostname, family, err, asked, lastAttempt);
    });
  }

  private fatal(hostname: string, family: RecordFamily, code: string, err: unknown, asked: string, attempt: number): ResolveError {
    if (code === 'ENOTFOUND') {
      return new ResolveError(hostname, 'NXDOMAIN', `${asked} answered that the name does not exist to the ${family} query, ${attempts(attempt)} (not retried); check the hostname and that these servers can see its zone`, { cause: err });
    }
    const message = err instanceof Error ? err.message : String(err);
    return new ResolveError(hostname, 'OTHER', `${family} query to ${asked} failed with ${code} after ${attempts(attempt)}: ${message}`, { cause: err });
  }

  private transient(hostname: string, family: RecordFamily, err: unknown, asked: string, attempt: number): ResolveError {
    const reason = TRANSIENT_DNS_ERRORS.get(dnsErrorCode(err))?.reason;
    const tried = attempts(attempt);
    switch (reason) {
      case 'SERVFAIL':
        return new ResolveError(hostname, reason, `${asked} answered SERVFAIL to the ${family} query, ${tried}; that server cannot currently get an answer for this name — check its upstreams or the name's zone`, { cause: err });
      case 'TIMEOUT':
        return new ResolveError(hostname, reason, `no answer from ${asked} to the ${family} query within ${this.timeoutMs} ms, ${tried}; check that the server is reachable from here or pass another --dns-server`, { cause: err });
      case 'REFUSED':
        return new ResolveError(hostname, reason, `${asked} refused the ${family} query, ${tried}; the server does not serve this client or is not listening — pass another --dns-server`, { cause: err });
      default: {
        const message = err instanceof Error ? err.message : String(err);
        return new ResolveError(hostname, 'OTHER', `${family} query to ${asked} failed after ${tried}: ${message}`, { cause: err });
      }
    }
  }
}
