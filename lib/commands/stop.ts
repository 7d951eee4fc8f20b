/** Resolves with the reason on SIGTERM, SIGINT or `signal` aborting: how long-running commands end. */
export function untilStopped(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve(why);
    };
    const onTerm = () => done('SIGTERM');
    const onInt = () => done('SIGINT');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
    signal?.addEventListener('abort', () => done('stop requested'), { once: true });
  });
}
