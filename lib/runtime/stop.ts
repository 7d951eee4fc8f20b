/** How a long-running command learns it must end: SIGTERM, SIGINT, or `signal` (tests) aborting. */
export interface Stop {
  /** Resolves with the reason. */
  readonly stopped: Promise<string>;
  /** Removes the signal handlers; the command calls it however it ends. */
  dispose(): void;
  /**
   * `work`, unless a stop comes first: then undefined. Start-up can wait minutes for the API
   * server (--wait-timeout); SIGTERM must still end the command within a second.
   */
  unlessStopped<T>(work: Promise<T>): Promise<T | undefined>;
}

export function untilStopped(signal: AbortSignal | undefined): Stop {
  let resolveStop: (why: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => {
    resolveStop = resolve;
  });
  const onTerm = () => resolveStop('SIGTERM');
  const onInt = () => resolveStop('SIGINT');
  const onAbort = () => resolveStop('stop requested');
  process.once('SIGTERM', onTerm);
  process.once('SIGINT', onInt);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return {
    stopped,
    dispose: () => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      signal?.removeEventListener('abort', onAbort);
    },
    unlessStopped: <T>(work: Promise<T>) => Promise.race([work, stopped.then(() => undefined)]),
  };
}
