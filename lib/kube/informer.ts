import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { KubeError } from '../errors.js';
import type { Logger } from '../runtime/log.js';
import { kubeErrorFrom } from './api-error.js';
import { Backoff } from './backoff.js';
import { kubeModule } from './client.js';

/** One page of a list: what `list` is asked for when the collection is listed in pages. */
export interface ListPage {
  readonly limit?: number;
  readonly continue?: string;
  /** Called with the next page's token as soon as it arrives, which may be before the items. */
  readonly onContinue?: (token: string) => void;
}

const WATCH_TIMEOUT_MIN_S = 300;
/**
 * A watch ended sooner than this with no event in it is taken as failed, and one that lives
 * this long, or brings an event, as working (see ProjectingWatch).
 */
const EMPTY_WATCH_MS = 1000;
const WATCH_ANSWER_MS = 60_000;

export interface WatchOptions<T extends KubernetesObject> {
  readonly kc: KubeConfig;
  /** For logs and metrics, e.g. `service openshift-ingress/router-default`. */
  readonly name: string;
  /** What is being read, for error messages: `list services in openshift-ingress`. */
  readonly what: string;
  readonly path: string;
  readonly list: (page: ListPage) => Promise<KubernetesListObject<T>>;
  /**
   * List in pages of this many objects (default: one request). A large collection in one
   * response is held all at once, as text and as parsed JSON.
   */
  readonly pageSize?: number;
  /**
   * Keeps only what the source reads of each object, before anything is cached: the cache
   * holds the whole collection for the life of the process, and a Node as the API sends it is
   * mostly the kubelet's image list. Must keep `metadata.name`, `metadata.namespace` and
   * `metadata.resourceVersion`, which the cache is keyed and resumed by. An update that
   * leaves the projection as it was, but for the resourceVersion, is not reported: otherwise
   * every heartbeat of every Node would recompute the whole Corefile.
   */
  readonly project?: (obj: T) => T;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  readonly log: Logger;
  /** Called with the cached objects after every change, and once after the first successful list. */
  readonly onChange: (items: T[]) => void;
  /** Called each time the watch fails and is restarted. */
  readonly onRestart?: (error: KubeError) => void;
  /** Read once the first list is in (a one-shot command); otherwise once its watch is open too. */
  readonly readAtList?: boolean;
  /**
   * How long a watch waits for the API server's answer, and for its end past the timeout it
   * asked for, before it is taken as failed (default 60 s).
   */
  readonly answerMs?: number;
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
  const { project, pageSize } = opts;
  const answerMs = opts.answerMs ?? WATCH_ANSWER_MS;
  // client-node gives a watch's request no time limit (its own is overwritten by its abort
  // signal): a watch the API server, or a proxy before it, accepts and never answers would
  // hold the collection forever. node-fetch's `timeout` bounds the wait for the answer.
  const watchConfig: KubeConfig = Object.create(opts.kc, {
    applyToFetchOptions: { value: async (o: Parameters<KubeConfig['applyToFetchOptions']>[0]) => ({ ...(await opts.kc.applyToFetchOptions(o)), timeout: answerMs }) },
  });
  /** Set while the cache takes in an update that changed nothing the source reads. */
  let unchanged = false;
  // The cache keys objects by metadata.name and reads it outside any error handling: an object
  // without one (a misbehaving server or proxy) would end the process or stop the source for good.
  const nameless = (what: string): void => opts.log.warn('ignored an object without metadata.name from the API server', { source: opts.name, in: what });
  /**
   * ListWatch opens the next watch at once whenever one ends without an error, and it reports
   * no error for an ERROR event (but 410) inside the stream, nor for a failure to prepare the
   * request (a credential plugin, a token file), which rejects where nobody waits. Each of
   * those ends the watch here with an error instead, so it is retried after a backoff: an API
   * server that refuses every watch is not asked again in a tight loop, and a watch is never
   * left dead.
   */
  class ProjectingWatch extends k8s.Watch {
    override async watch(...[path, query, callback, done]: Parameters<InstanceType<typeof k8s.Watch>['watch']>): Promise<AbortController> {
      // ListWatch asks for the watch as soon as it has put a list in the cache: a one-shot read
      // has what it came for now, however long the watch then takes to be answered.
      if (opts.readAtList === true && !synced && !stopped) {
        synced = true;
        lastError = undefined;
        notify();
      }
      listed();
      const opened = Date.now();
      let events = 0;
      let finished = false;
      // Only a watch that works starts the backoff over: one refused at once, again and again,
      // is asked for less and less often.
      const working = setTimeout(() => backoff.succeeded(), EMPTY_WATCH_MS);
      working.unref();
      let overdue: NodeJS.Timeout | undefined;
      const finish = (err: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(working);
        clearTimeout(overdue);
        const empty = (err === null || err === undefined) && events === 0 && Date.now() - opened < EMPTY_WATCH_MS;
        done(empty ? new Error('the API server ended the watch as soon as it began') : err);
      };
      const projected = (phase: string, obj: unknown, watchObj: unknown) => {
        const change = phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED';
        if (change && !named(obj)) return nameless(`a ${phase} event`);
        if (project === undefined || !change) return callback(phase, obj, watchObj);
        const kept = project(obj as T);
        const before = phase === 'MODIFIED' ? informer.get(kept.metadata?.name ?? '', kept.metadata?.namespace) : undefined;
        // The cache calls its update handlers synchronously, inside this callback.
        unchanged = before !== undefined && sameApartFromVersion(before, kept);
        try {
          return callback(phase, kept, watchObj);
        } finally {
          unchanged = false;
        }
      };
      let controller: AbortController | undefined;
      // As client-go does: the server ends each watch after 5 to 10 minutes, so a connection
      // that died silently is replaced, and bookmarks keep the resourceVersion fresh so the
      // next watch resumes instead of relisting.
      const timeoutSeconds = WATCH_TIMEOUT_MIN_S + Math.floor(Math.random() * WATCH_TIMEOUT_MIN_S);
      try {
        controller = await super.watch(
          path,
          { ...query, timeoutSeconds, allowWatchBookmarks: true },
          (phase, obj, watchObj) => {
            events += 1;
            const status = obj as { code?: unknown; message?: unknown } | null;
            if (phase !== 'ERROR') backoff.succeeded();
            if (phase !== 'ERROR' || status?.code === 410) return projected(phase, obj, watchObj);
            controller?.abort();
            finish(Object.assign(new Error(typeof status?.message === 'string' ? status.message : 'the watch failed'), { statusCode: status?.code }));
          },
          finish,
        );
      } catch (err) {
        setImmediate(() => finish(err));
        return new AbortController();
      }
      // ListWatch opens the next watch after a relist without asking whether it was stopped.
      if (stopped) controller.abort();
      else if (!finished) {
        // A connection that died half-open after the answer brings nothing, and its end never comes.
        const opened = controller;
        overdue = setTimeout(() => {
          finish(new Error('the API server did not end the watch by the timeout it was given'));
          opened.abort();
        }, timeoutSeconds * 1000 + answerMs);
        overdue.unref();
      }
      return controller;
    }
  }
  type Fetched = { readonly page: KubernetesListObject<T>; readonly next: Promise<Fetched> | undefined };
  // The next page is asked for as soon as its token arrives (kube-apiserver sends the list's
  // metadata before its items): the server prepares it while this one is received and decoded.
  // One page ahead, no more: the page after waits until the one before this has arrived, so a
  // list that fails leaves at most one request behind, and a large one is not held all at once.
  const fetchPage = (size: number, token: string | undefined, before: Promise<unknown>): Promise<Fetched> => {
    let next: Promise<Fetched> | undefined;
    const follow = (t: string) => {
      if (next !== undefined) return;
      next = before.then(() => fetchPage(size, t, fetched));
      // Awaited only if this page succeeds; a failure of this one is what the list reports.
      next.catch(() => undefined);
    };
    const fetched = opts.list({ limit: size, ...(token === undefined ? {} : { continue: token }), onContinue: follow }).then((page) => {
      const t = continueOf(page);
      if (t !== undefined) follow(t);
      return { page, next };
    });
    return fetched;
  };
  const listAll = async (): Promise<KubernetesListObject<T>> => {
    const keep = project ?? ((obj: T) => obj);
    const kept = (items: readonly unknown[] | null | undefined): T[] =>
      (items ?? []).flatMap((item) => {
        if (named(item)) return [keep(item as T)];
        nameless('a list item');
        return [];
      });
    if (pageSize === undefined) {
      const page = await opts.list({});
      return { ...page, items: kept(page.items) };
    }
    const items: T[] = [];
    let pending: Promise<Fetched> | undefined = fetchPage(pageSize, undefined, Promise.resolve());
    let last: KubernetesListObject<T> | undefined;
    while (pending !== undefined) {
      const { page, next }: Fetched = await pending;
      items.push(...kept(page.items));
      last = page;
      pending = next;
    }
    return { ...(last as KubernetesListObject<T>), items };
  };
  const informer = new k8s.ListWatch<T>(opts.path, new ProjectingWatch(watchConfig), listAll, false, opts.labelSelector, opts.fieldSelector);
  let stopped = false;
  let synced = false;
  let listed = (): void => undefined;
  const firstList = new Promise<void>((resolve) => {
    listed = resolve;
  });
  let lastError: KubeError | undefined;
  const backoff = new Backoff(() => void start().catch(() => undefined), { minMs: 500, maxMs: 30_000, jitter: 0.2 });

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
    // A watching collection is read once its watch is open too: one the API refuses (RBAC) would keep a list no change reaches.
    if (stopped || failed || synced) return;
    synced = true;
    lastError = undefined;
    notify();
  };

  // Once for all the events of one turn: a relist (after a 410) adds or updates every object
  // in one loop, and a notice per object recomputed the whole collection each time (5,000 Nodes:
  // 71 s of a blocked process).
  let queued = false;
  const notifySoon = () => {
    if (!synced || queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      if (!stopped) notify();
    });
  };
  informer.on('add', notifySoon);
  informer.on('update', () => !unchanged && notifySoon());
  informer.on('delete', notifySoon);
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    const error = kubeErrorFrom(err, opts.what);
    if (!synced) lastError = error;
    const delay = backoff.failed();
    opts.log.warn('watch failed; keeping the last known objects and restarting', { source: opts.name, error: error.message, retryInMs: delay });
    opts.onRestart?.(error);
  });

  // A one-shot read waits until the first list is in, or fails: not until its watch is answered, which a proxy may hold.
  await (opts.readAtList === true ? Promise.race([start().catch(() => undefined), firstList]) : start().catch(() => undefined));
  return {
    name: opts.name,
    items: () => [...informer.list()],
    synced: () => synced,
    lastError: () => lastError,
    stop: async () => {
      stopped = true;
      backoff.cancel();
      await informer.stop();
    },
  };
}

/** The token to the next page, as the API sends it (client-node's typed lists rename it `_continue`). */
function continueOf(list: KubernetesListObject<KubernetesObject>): string | undefined {
  const token = (list.metadata as { continue?: unknown } | undefined)?.continue;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

function sameApartFromVersion(a: KubernetesObject, b: KubernetesObject): boolean {
  const canonical = (o: KubernetesObject) => JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return canonical(a) === canonical(b);
}

/** An object the informer's cache can key: metadata.name a non-empty string. */
function named(obj: unknown): boolean {
  const name = (obj as { metadata?: { name?: unknown } | null } | null)?.metadata?.name;
  return typeof name === 'string' && name !== '';
}
