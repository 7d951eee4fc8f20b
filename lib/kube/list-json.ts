import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { JsonSelector, type Selection } from './json-select.js';

export interface ListQuery {
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
}

/** A failed request in the shape client-node gives its errors, so `kubeErrorFrom` reads both alike. */
class ListRequestError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}`);
  }
}

/** Every member of a list, each built as it completes: its metadata (and next-page token) comes before its items. */
const WHOLE_LIST: Selection = { kind: true, apiVersion: true, metadata: true, items: true };

/**
 * A list whose connection carries nothing for this long fails, and its informer lists again:
 * a connection gone half-open would otherwise leave the source unsynced with no error.
 */
const LIST_IDLE_TIMEOUT_MS = 60_000;

/**
 * GETs a collection as plain JSON, with the credentials, TLS settings and proxy of the
 * kubeconfig, applied the way client-node applies them to its watches. client-node's typed
 * list calls build a class instance for every object and field on top of the parsed JSON:
 * for thousands of Nodes that doubles the memory and the time a list takes, and watch events
 * arrive as plain JSON anyway.
 */
export async function listJson(
  kc: KubeConfig,
  path: string,
  query: ListQuery,
  select: Selection = WHOLE_LIST,
  onContinue?: (token: string) => void,
  idleTimeoutMs = LIST_IDLE_TIMEOUT_MS,
): Promise<KubernetesListObject<KubernetesObject>> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(server.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  // kube-apiserver compresses a large answer for a client that accepts it, as client-node's fetch does.
  const options: RequestOptions = { method: 'GET', headers: { Accept: 'application/json', 'Accept-Encoding': 'gzip' } };
  await kc.applyToHTTPSOptions(options);
  // Loaded here: only the cluster commands list anything.
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const { createGunzip } = await import('node:zlib');
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res: IncomingMessage) => {
      const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
      // Built as it arrives, and only what `select` names: each read's buffer is garbage at once,
      // and the parts of a large list nobody reads never become strings or objects.
      const onMetadata = (key: string, value: unknown) => {
        const token = key === 'metadata' ? (value as { continue?: unknown } | null)?.continue : undefined;
        if (typeof token === 'string' && token !== '') onContinue?.(token);
      };
      const selector = res.statusCode === 200 ? new JsonSelector(select === true ? WHOLE_LIST : select, onContinue && onMetadata) : undefined;
      const errorText: Buffer[] = [];
      const failed = (err: unknown) => {
        body.destroy();
        reject(err);
      };
      body.on('data', (chunk: Buffer) => {
        if (selector === undefined) errorText.push(chunk);
        else {
          try {
            selector.write(chunk);
          } catch (err) {
            failed(new Error(`GET ${path}: the answer is not JSON (${(err as Error).message})`));
          }
        }
      });
      res.on('error', reject);
      body.on('error', reject);
      body.on('end', () => {
        if (selector === undefined) {
          reject(new ListRequestError(res.statusCode ?? 0, Buffer.concat(errorText).toString('utf8')));
          return;
        }
        try {
          resolve(selector.end() as KubernetesListObject<KubernetesObject>);
        } catch (err) {
          reject(new Error(`GET ${path}: the answer is not JSON (${(err as Error).message})`));
        }
      });
    });
    req.setTimeout(idleTimeoutMs, () => req.destroy(new Error(`GET ${path}: nothing received for ${idleTimeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}
