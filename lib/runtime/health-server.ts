import type { Server } from 'node:http';
import { ConfigError, quote } from '../errors.js';
import { parseHostPort } from '../grammar/host-port.js';
import type { Metrics } from './metrics.js';

// node:http alone: /healthz, /readyz and /metrics need no framework, which would only add to start-up and memory.

export interface HealthServer {
  readonly address: string;
  close(): Promise<void>;
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (loopback). */
export function parseListenAddress(value: string): { host: string; port: number } {
  const address = parseHostPort(value, { names: true, emptyHost: true, portRequired: true, minPort: 0 });
  if (address?.port === undefined) throw new ConfigError(`--metrics-addr ${quote(value)}: not HOST:PORT (e.g. 127.0.0.1:9191, or :0 for any free port)`);
  return { host: address.host || '127.0.0.1', port: address.port };
}

/**
 * /healthz: the process serves; /readyz: a complete Corefile was rendered, then the lines of
 * `detail` (what an admin should know about what is served); /metrics: Prometheus text.
 */
export async function startHealthServer(listen: string, metrics: Metrics, isReady: () => boolean, notReadyReason: string, detail: () => readonly string[] = () => []): Promise<HealthServer> {
  metrics.ready = isReady;
  const { host, port } = parseListenAddress(listen);
  // Loaded here: the one-shot commands, on every node boot's path, never serve HTTP.
  const { createServer } = await import('node:http');
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      const lines = [ready ? 'ok' : notReadyReason, ...detail()];
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n`);
    } else if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new ConfigError(`--metrics-addr ${listen}: cannot listen (${(err as NodeJS.ErrnoException).code ?? String(err)})`)));
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : listen;
  return {
    address: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
