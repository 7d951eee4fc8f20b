import { Backoff } from '../kube/backoff.js';
import type { Endpoint } from '../model.js';
import type { ApiProbeError } from '../sinks/api-int-probe.js';
import type { Logger } from './log.js';

export interface ApiIntGateOptions {
  /** Resolves once a kube-apiserver for api-int answers at the address; rejects with an ApiProbeError. */
  readonly probe: (ip: string) => Promise<void>;
  readonly log: Logger;
  /** api-int moved: the state must be recomputed. */
  readonly onSwitch: () => void;
  /** A probe failed, with its reason (`unreachable`, `tls`, `timeout`, `http-status`); `first`: the first for this address, which settles it (settled()). */
  readonly onFailure?: (reason: string, first: boolean) => void;
  /** Retry delays of a failing probe. */
  readonly retry?: { readonly minMs: number; readonly maxMs: number };
  /**
   * The api-int address the Corefile already on this node serves: a move this node verified
   * before its pod restarted. Served at once; leaving it is verified like any move.
   */
  readonly servedBefore?: string | undefined;
}

/** The VIPs of the Infrastructure: where api-int is served when no other address is asked for. */
const VIP = 'the API VIP';

/**
 * The on-prem design's verified api-int migration. The address an admin asks for
 * (HostedNetServices `spec.dns.apiintIpAddress`) is served only once a kube-apiserver is proven
 * to answer there (TLS with the cluster CA for `api-int.<domain>`, then /readyz); until then the
 * address served before stays, the reason is logged and counted, and the probe is retried with
 * backoff. Going back to the VIP is verified the same way. A restarted pod starts from the
 * address its Corefile served (verified then), whatever is asked at its start: a HostedNetServices
 * not read yet (an API server that has not registered the CRD) must not move api-int unverified.
 */
export class ApiIntGate {
  /** What api-int serves: an address that passed the probe, or VIP. */
  private current: string = VIP;
  /** `current` was reached by a probe (or served so before a restart), not assumed. */
  private verified = false;
  private wanted: string = VIP;
  private verifying: string | undefined;
  private lastFailure: { readonly address: string; readonly message: string } | undefined;
  private stopped = false;
  private readonly backoff: Backoff;
  private vipTarget: string | undefined;
  /** Until the first select: see ApiIntGateOptions.servedBefore. */
  private servedBefore: string | undefined;

  constructor(private readonly opts: ApiIntGateOptions) {
    this.servedBefore = opts.servedBefore;
    this.backoff = new Backoff(() => this.verify(), { ...(opts.retry ?? { minMs: 1000, maxMs: 60_000 }), jitter: 0.2 });
  }

  /** The api-int endpoints to serve, given the address asked for (undefined: the VIP) and the VIPs. */
  select(asked: string | undefined, vips: readonly Endpoint[]): readonly Endpoint[] {
    this.vipTarget = vips.flatMap((e) => (e.kind === 'ip' ? [e.ip] : []))[0];
    this.wanted = asked ?? VIP;
    if (this.servedBefore !== undefined) {
      if (!vips.some((e) => e.kind === 'ip' && e.ip === this.servedBefore)) [this.current, this.verified] = [this.servedBefore, true];
      this.servedBefore = undefined;
    }
    if (this.wanted === this.current) {
      this.backoff.restart();
      this.verifying = undefined;
      this.lastFailure = undefined;
    } else if (this.verifying !== this.wanted) {
      // Another address's failures say nothing of this one: its retries start from the shortest
      // delay, and settled() waits for its own first probe.
      this.backoff.restart();
      this.lastFailure = undefined;
      this.verify();
    }
    return this.current === VIP ? vips : [{ kind: 'ip', ip: this.current }];
  }

  /** No move asked for is waiting on its first probe: a one-shot command's answer is the one a node would serve. */
  settled(): boolean {
    return this.wanted === this.current || this.lastFailure !== undefined || (this.wanted === VIP && this.vipTarget === undefined);
  }

  /** For /readyz and display: what api-int serves and, while a move waits, why. */
  describe(): string {
    const served = this.named(this.current);
    if (this.wanted === this.current) return `api-int: ${served}${this.verified ? ' (verified)' : ''}`;
    const why = this.lastFailure ? `: ${this.lastFailure.message}` : ': verifying';
    return `api-int: ${served}, not yet ${this.named(this.wanted)}${why}`;
  }

  private named(address: string): string {
    return address === VIP && this.vipTarget !== undefined ? `${VIP} (${this.vipTarget})` : address;
  }

  /** What api-int serves, in words, and while a move waits, why; for the HostedNetServices conditions. */
  report(): { readonly served: string; readonly pending: string | undefined } {
    const served = `api-int answers ${this.current === VIP ? VIP : `${this.current} (verified)`}`;
    if (this.wanted === this.current) return { served, pending: undefined };
    return { served, pending: `the move to ${this.wanted === VIP ? VIP : this.wanted} is not verified${this.lastFailure ? `: ${this.lastFailure.message}` : ' yet'}` };
  }

  stop(): void {
    this.stopped = true;
    this.backoff.cancel();
  }

  private verify(): void {
    if (this.stopped || this.wanted === this.current) return;
    const key = this.wanted;
    const address = key === VIP ? this.vipTarget : key;
    if (address === undefined) return;
    this.verifying = key;
    this.opts.probe(address).then(
      () => {
        if (this.stopped || this.wanted !== key) return;
        const from = this.current;
        [this.current, this.verified] = [key, true];
        this.verifying = undefined;
        this.lastFailure = undefined;
        this.backoff.succeeded();
        this.opts.log.info('api-int moved: a kube-apiserver answers there', { from, to: key === VIP ? `${VIP} (${address})` : key });
        this.opts.onSwitch();
      },
      (err: ApiProbeError) => {
        if (this.stopped || this.wanted !== key) return;
        const first = this.lastFailure === undefined;
        this.lastFailure = { address, message: err.message };
        this.opts.onFailure?.(err.reason ?? 'unreachable', first);
        // Still `verifying`: the backoff's retry probes again, and select() must not probe sooner.
        const retryInMs = this.backoff.failed();
        this.opts.log.warn('api-int not moved: no kube-apiserver proven at the address; serving the previous one', { asked: address, serving: this.current, reason: err.reason, error: err.message, retryInMs });
      },
    );
  }
}
