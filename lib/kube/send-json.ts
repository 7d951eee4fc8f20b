import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A failed request in the shape client-node gives its errors, so `kubeErrorFrom` reads both alike. */
class SendRequestError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}`);
  }
}

const SEND_TIMEOUT_MS = 30_000;

/**
 * POSTs or PATCHes one object as JSON with the kubeconfig's credentials, TLS and proxy, as
 * listJson GETs: for the few writes that have no typed client in the bundle (core v1 Events).
 */
export async function sendJson(kc: KubeConfig, method: 'POST' | 'PATCH', path: string, body: unknown, contentType = 'application/json'): Promise<unknown> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(server.replace(/\/+$/, '') + path);
  const payload = JSON.stringify(body);
  const options: RequestOptions = { method, headers: { Accept: 'application/json', 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } };
  await kc.applyToHTTPSOptions(options);
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) {
          reject(new SendRequestError(status, text));
          return;
        }
        try {
          resolve(JSON.parse(text) as unknown);
        } catch (err) {
          reject(new Error(`${method} ${path}: the answer is not JSON (${(err as Error).message})`));
        }
      });
    });
    req.setTimeout(SEND_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path}: no answer for ${SEND_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(payload);
  });
}
