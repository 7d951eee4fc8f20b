import type { KubernetesObject } from '@kubernetes/client-node';
import { httpStatusOf } from './api-error.js';
import { watchCollection, type WatchedCollection, type WatchOptions } from './informer.js';

export interface WhenServedOptions<T extends KubernetesObject> extends WatchOptions<T> {
  /** How often to ask again while the collection's path is not served. */
  readonly probeMs: number;
  /** The path answers 404: nothing serves the collection (at start, or its CRD was removed). */
  readonly onAbsent: () => void;
  /** The path answers now, after it did not. */
  readonly onServed: () => void;
  /** Asking whether it is served failed otherwise (RBAC, the API server): asked again. */
  readonly onProbeFailed: (error: Error) => void;
}

const notFound = (err: unknown): boolean => httpStatusOf(err) === 404;

/**
 * A collection whose CRD may be installed after lbdns starts, or removed: while its path
 * answers 404 the collection is read as empty and asked again every `probeMs`; once a list
 * succeeds it is watched like any other, so installing the CRD needs no restart, and a watch
 * that meets 404 goes back to asking. That 404 empties the collection only once a probe
 * `probeMs` later still meets it (the CRD removed, its objects with it): an API server that
 * has just started answers 404 for custom resources until it has registered their CRDs, and
 * that must not take the objects' settings away for a moment. At start any other failure is
 * the watch's to retry, as for every source; later it only delays the watch, so a CRD
 * installed without the RBAC to read it leaves the data as it was and never holds up the other
 * sources. Read as absent counts as read.
 */
export async function watchWhenServed<T extends KubernetesObject>(opts: WhenServedOptions<T>): Promise<WatchedCollection<T>> {
  let inner: WatchedCollection<T> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let probing = false;
  /** What the watch held when it met 404, served until a probe says the CRD is gone; undefined once read as absent. */
  let kept: T[] | undefined;
  /** Listed once, or read as absent: from then on, what was read is served while a new watch lists. */
  let read = false;

  /** Bumped by each 404: a watch started before it is stale once it has started. */
  let generation = 0;
  const watch = async (): Promise<void> => {
    const at = generation;
    const started = await watchCollection({
      ...opts,
      onRestart: (error) => {
        if (notFound(error)) void unsure();
        else opts.onRestart?.(error);
      },
    });
    if (stopped || at !== generation) await started.stop();
    else inner = started;
  };
  const probeEvery = () => {
    if (timer !== undefined) return;
    timer = setInterval(() => void probe(), opts.probeMs);
    timer.unref();
  };
  const absent = (): void => {
    kept = undefined;
    opts.onAbsent();
    opts.onChange([]);
  };
  /** The watch met 404: ask again before believing it. */
  const unsure = async (): Promise<void> => {
    generation += 1;
    const was = inner;
    inner = undefined;
    if (was?.synced() === true) read = true;
    kept = was?.items() ?? kept ?? [];
    await was?.stop();
    if (!stopped) probeEvery();
  };
  const probe = async (): Promise<void> => {
    if (probing || stopped) return;
    probing = true;
    try {
      await opts.list({ limit: 1 });
      clearInterval(timer);
      timer = undefined;
      if (kept === undefined) opts.onServed();
      // What it held stays served (kept) until the new watch has listed: a watch refused for a while must not hold up the other sources.
      await watch();
    } catch (err) {
      if (!notFound(err)) opts.onProbeFailed(err as Error);
      else if (kept !== undefined) absent();
    } finally {
      probing = false;
    }
  };

  const servedAtStart = await opts.list({ limit: 1 }).then(
    () => true,
    (err: unknown) => !notFound(err),
  );
  if (servedAtStart) await watch();
  else {
    read = true;
    absent();
    probeEvery();
  }
  const listed = (): boolean => {
    if (inner?.synced() !== true) return false;
    kept = undefined;
    read = true;
    return true;
  };
  return {
    name: opts.name,
    items: () => (listed() ? (inner as WatchedCollection<T>).items() : (kept ?? (read ? [] : (inner?.items() ?? [])))),
    synced: () => inner === undefined || listed() || read,
    lastError: () => inner?.lastError(),
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await inner?.stop();
    },
  };
}
