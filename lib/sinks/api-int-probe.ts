import { readInputBytes } from '../inputs/admin-file.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { joinHostPort } from '../grammar/host-port.js';

/** Where the probe looks: one address, the API port, the name the certificate must carry, the CA it must chain to. */
export interface ApiProbeTarget {
  readonly ip: string;
  readonly port: number;
  /** `api-int.<domain>`: sent as SNI and checked against the certificate. */
  readonly serverName: string;
  /** PEM: the cluster CA bundle from the kubeconfig. */
  readonly ca: string | Buffer;
  readonly timeoutMs: number;
}

/** Why an address is not (yet) a kube-apiserver for api-int: short, for a condition, a log line and a metric label. */
export class ApiProbeError extends Error {
  constructor(
    /** `unreachable`, `tls`, `timeout` or `http-status`. */
    readonly reason: 'unreachable' | 'tls' | 'timeout' | 'http-status',
    message: string,
  ) {
    super(message);
  }
}

/** 200 (anonymous /readyz allowed), or 401/403 (it asks for credentials): an API server answers either way. */
const API_SERVER_ANSWERS = new Set([200, 401, 403]);

/**
 * Proves a kube-apiserver for api-int answers at `ip`: TLS with the cluster CA and
 * `api-int.<domain>` as the server name (Node checks the certificate's names), then
 * GET /readyz. Resolves when it does; rejects with an ApiProbeError saying why not.
 */
export async function probeApiServer(target: ApiProbeTarget): Promise<void> {
  const [{ request }, { checkServerIdentity }] = await Promise.all([import('node:https'), import('node:tls')]);
  const where = joinHostPort(target.ip, target.port);
  await new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: target.ip,
        port: target.port,
        path: '/readyz',
        method: 'GET',
        servername: target.serverName,
        ca: target.ca,
        rejectUnauthorized: true,
        // The certificate is checked against api-int.<domain>, not the IP dialled.
        checkServerIdentity: (_host, cert) => checkServerIdentity(target.serverName, cert),
        agent: false,
        timeout: target.timeoutMs,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (API_SERVER_ANSWERS.has(status)) resolve();
        else reject(new ApiProbeError('http-status', `https://${where}/readyz answered HTTP ${status}, not an API server's 200, 401 or 403`));
      },
    );
    req.on('timeout', () => req.destroy(new ApiProbeError('timeout', `${where}: no answer within ${target.timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof ApiProbeError) return reject(err);
      const tlsCodes = /CERT|SELF_SIGNED|ALTNAME|UNABLE_TO|ERR_TLS|SSL/;
      if (tlsCodes.test(err.code ?? '') || tlsCodes.test(err.message)) {
        reject(new ApiProbeError('tls', `${where}: TLS for ${target.serverName} not verified with the cluster CA (${err.code ?? err.message})`));
      } else {
        reject(new ApiProbeError('unreachable', `${where}: ${err.code ?? err.message}`));
      }
    });
    req.end();
  });
}

/** The cluster CA bundle a kubeconfig trusts (inline data or file), or undefined when it names none. */
export async function clusterCa(kc: KubeConfig): Promise<Buffer | undefined> {
  const cluster = kc.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, 'base64');
  if (cluster?.caFile) return readInputBytes(cluster.caFile, { flag: 'kubeconfig certificate-authority' });
  return undefined;
}
