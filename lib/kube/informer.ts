import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { KubeError } from '../errors.js';
import type { Logger } from '../log.js';
import { kubeErrorFrom } from './api-error.js';
import { kubeModule } from './client.js';

export interface WatchOptions<T extends KubernetesObject> {
  readonly kc: KubeConfig;
  /** For logs and metrics, e.g. `service openshift-ingress/router-default`. */
  readonly name: string;
  /** What is being read, for error messages: `list services in openshift-ingress`. */
  readonly what: string;
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly fieldSelector?: string;
  readonly log: Logger;
  /** Called with the cached objects after every change, and once after the first successful list. */
  readonly onChange: (items: T[]) => void;
  /** Called each time the watch fails and is restarted. */
  readonly onRestart?: (error: KubeError) => void;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

/** A list+watch of one collection whose cache survives API outages. */
export interface WatchedCollection<T> {
  readonly name: string;
  items(): T[];
  /** True once the first list has succeeded. */
  synced(): boolean;
  /** The last failure while not yet synced, for "what is missing" messages. */
  lastError(): KubeError | undefined;
  stop(): Promise<void>;
}

/**
 * client-node's ListWatch relists on 410 Gone by itself but stops for good on any other
 * error; restarting it is ours. Its cache is kept across restarts, so an API outage
 * leaves the last known objects in place until a successful relist says otherwise.
 */
export async function watchCollection<T extends KubernetesObject>(opts: WatchOptions<T>): Promise<WatchedCollection<T>> {
  const k8s = await kubeModule();
  const informer = new k8s.ListWatch<T>(opts.path, new k8s.Watch(opts.kc), opts.list, false, undefined, opts.fieldSelector);
  const minBackoff = opts.minBackoffMs ?? 500;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;
  let backoff = minBackoff;
  let stopped = false;
  let synced = false;
  let lastError: KubeError | undefined;
  let restartTimer: NodeJS.Timeout | undefined;

  const notify = () => {
    try {
      opts.onChange([...informer.list()]);
    } catch (err) {
      opts.log.error('change handler failed', { source: opts.name, error: String(err) });
    }
  };
  const start = async () => {
    let failed = false;
    const onError = () => {
      failed = true;
    };
    informer.on('error', onError);
    try {
      await informer.start();
    } finally {
      informer.off('error', onError);
    }
    if (stopped || failed) return;
    backoff = minBackoff;
    if (!synced) {
      synced = true;
      lastError = undefined;
      notify();
    }
  };

  for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, () => synced && notify());
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    const error = kubeErrorFrom(err, opts.what);
    if (!synced) lastError = error;
    const delay = Math.round(backoff * (0.8 + Math.random() * 0.4));
    backoff = Math.min(backoff * 2, maxBackoff);
    opts.log.warn('watch failed; keeping the last known objects and restarting', { source: opts.name, error: error.message, retryInMs: delay });
    opts.onRestart?.(error);
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => void start().catch(() => undefined), delay);
  });

  await start().catch(() => undefined);
  return {
    name: opts.name,
    items: () => [...informer.list()],
    synced: () => synced,
    lastError: () => lastError,
    stop: async () => {
      stopped = true;
      clearTimeout(restartTimer);
      await informer.stop();
    },
  };
}
