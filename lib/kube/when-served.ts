import type { KubernetesObject } from '@kubernetes/client-node';
import { watchCollection, type WatchedCollection, type WatchOptions } from './informer.js';

const NOT_FOUND = 404;

export interface WhenServedOptions<T extends KubernetesObject> extends WatchOptions<T> {
  /** How often to ask again while the collection's path is not served. */
  readonly probeMs: number;
  /** The path answered 404 at start: nothing serves the collection yet. */
  readonly onAbsent: () => void;
  /** The path answers now, after it did not. */
  readonly onServed: () => void;
}

/**
 * A collection whose CRD may be installed after lbdns starts: while its path answers 404 the
 * collection is read as empty and asked again every `probeMs`; once it answers, it is
 * watched like any other, so installing the CRD needs no restart. Any other failure is the
 * watch's to retry. It counts as read from the first answer on: a CRD installed without the
 * RBAC to read it leaves the data as it was (with the watch's warnings), it never holds up
 * the other sources.
 */
export async function watchWhenServed<T extends KubernetesObject>(opts: WhenServedOptions<T>): Promise<WatchedCollection<T>> {
  const served = async (): Promise<boolean> => {
    try {
      await opts.list({ limit: 1 });
      return true;
    } catch (err) {
      return (err as { code?: unknown }).code !== NOT_FOUND;
    }
  };
  if (await served()) return watchCollection(opts);
  opts.onAbsent();
  opts.onChange([]);
  let inner: WatchedCollection<T> | undefined;
  let stopped = false;
  let probing = false;
  const timer = setInterval(() => {
    if (probing) return;
    probing = true;
    void served()
      .then(async (now) => {
        if (!now || stopped || inner !== undefined) return;
        clearInterval(timer);
        opts.onServed();
        inner = await watchCollection(opts);
        if (stopped) await inner.stop();
      })
      .finally(() => {
        probing = false;
      });
  }, opts.probeMs);
  timer.unref();
  return {
    name: opts.name,
    items: () => inner?.items() ?? [],
    synced: () => true,
    lastError: () => undefined,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await inner?.stop();
    },
  };
}
