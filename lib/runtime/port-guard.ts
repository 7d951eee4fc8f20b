import { Resolver } from 'node:dns/promises';
import type { ListenSettings } from '../model.js';

export interface PortGuardOptions {
  /** CoreDNS's own `health` endpoint: answering means this pod's CoreDNS is up. */
  readonly healthUrl: string;
  /** Where CoreDNS is to answer DNS. */
  readonly listen: ListenSettings;
  readonly intervalMs: number;
  /** The conflict found, or undefined once it is gone. */
  readonly onChange: (conflict: string | undefined) => void;
}

/** A name no server holds: any answer to it says a DNS server is there. */
const PROBE = 'lbdns-port-check.invalid';

/**
 * Finds another DNS server on the port CoreDNS is to use (an on-prem cluster's own CoreDNS from
 * the Machine Config Operator, a node dnsmasq): CoreDNS then cannot start and restarts in a
 * loop while the other answers in its place. Said when, twice in a row, CoreDNS's `health`
 * does not answer but something answers DNS at its address: asked, never bound, so it needs no
 * privilege and takes the port from no one.
 */
export class PortGuard {
  private timer: NodeJS.Timeout | undefined;
  private seen = 0;
  private current: string | undefined;

  constructor(private readonly opts: PortGuardOptions) {}

  start(): void {
    this.timer ??= setInterval(() => void this.check(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  conflict(): string | undefined {
    return this.current;
  }

  private async check(): Promise<void> {
    const { listen } = this.opts;
    const host = listen.address ?? '127.0.0.1';
    const healthy = await fetch(this.opts.healthUrl, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false);
    const answered = healthy ? false : await this.dnsAnswers(host, listen.port);
    this.seen = answered ? this.seen + 1 : 0;
    const conflict = this.seen >= 2 ? `CoreDNS is not running, and another DNS server answers at ${host.includes(':') ? `[${host}]` : host}:${listen.port}, the address it is to listen on: stop that server (an on-prem cluster's own CoreDNS, a node dnsmasq) or give CoreDNS another --listen` : undefined;
    if (conflict !== this.current) {
      this.current = conflict;
      this.opts.onChange(conflict);
    }
  }

  private async dnsAnswers(host: string, port: number): Promise<boolean> {
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`]);
    try {
      await resolver.resolveTxt(PROBE);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No answer at all: nothing listens (or a firewall); any rcode is an answer.
      return code !== 'ETIMEOUT' && code !== 'ECONNREFUSED';
    }
  }
}
