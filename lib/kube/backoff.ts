/**
 * The one retry-later mechanism of the long-running loops (a watch that failed, a Corefile
 * write or status publish that failed): calls `retry` after a delay that doubles with each
 * failure in a row, up to a cap, and starts over after a success. p-retry serves the calls
 * that are awaited; these loops are driven by events and must not block waiting.
 */
export interface BackoffOptions {
  readonly minMs: number;
  readonly maxMs: number;
  /** Each delay is spread by ± this ratio of itself, so many clients do not retry in step. Default 0. */
  readonly jitter?: number;
}

export class Backoff {
  private delayMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly retry: () => void,
    private readonly opts: BackoffOptions,
  ) {
    this.delayMs = opts.minMs;
  }

  /** Schedules the retry after a failure, replacing one already scheduled; returns the delay. */
  failed(): number {
    const spread = this.opts.jitter ?? 0;
    const wait = Math.round(this.delayMs * (1 - spread + Math.random() * 2 * spread));
    this.delayMs = Math.min(this.delayMs * 2, this.opts.maxMs);
    this.cancel();
    this.timer = setTimeout(this.retry, wait);
    return wait;
  }

  succeeded(): void {
    this.delayMs = this.opts.minMs;
  }

  /** Cancels, and the next failure waits the shortest delay again: what is retried is something else now. */
  restart(): void {
    this.cancel();
    this.delayMs = this.opts.minMs;
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
