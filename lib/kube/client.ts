import { access } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CORE_SCHEMA, load as loadYaml } from 'js-yaml';
import { readInputFile } from '../inputs/admin-file.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, quote } from '../errors.js';

export type KubeModule = typeof import('./api.js');

/** Loaded on first use only: the client is the heaviest module, and local renders never need it. */
export async function kubeModule(): Promise<KubeModule> {
  return import('./api.js');
}

export interface KubeconfigSource {
  /** Positional argument or --kubeconfig; wins over the environment. */
  readonly path?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The name lbdns's writes carry, so an object's managedFields say which fields are lbdns's. */
export const FIELD_MANAGER = 'lbdns';

/**
 * Path, then KUBECONFIG, then the pod's service account. Unlike client-node's
 * loadFromDefault there is no silent fallback to http://localhost:8080: a monitor talking
 * to nothing would look healthy while serving stale data.
 */
export async function loadKubeConfig(source: KubeconfigSource): Promise<KubeConfig> {
  const k8s = await kubeModule();
  const kc = new k8s.KubeConfig();
  const path = source.path ?? source.env.KUBECONFIG?.split(':').find((p) => p !== '');
  if (path !== undefined) {
    const text = await readInputFile(path, { flag: 'kubeconfig', hint: 'check the path and the volume mount' });
    let doc: unknown;
    try {
      doc = loadYaml(text, { schema: CORE_SCHEMA });
    } catch (err) {
      throw new ConfigError(`kubeconfig ${path}: is not YAML (${(err as Error).message.split('\n')[0]})`);
    }
    const clusters = (doc as { clusters?: unknown } | null)?.clusters;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !Array.isArray(clusters) || clusters.length === 0) {
      throw new ConfigError(`kubeconfig ${path}: is not a kubeconfig: ${typeof doc !== 'object' || doc === null || Array.isArray(doc) ? 'not a YAML mapping' : 'it lists no clusters'}`);
    }
    try {
      kc.loadFromString(text);
    } catch (err) {
      throw new ConfigError(`kubeconfig ${path}: not a usable kubeconfig (${(err as Error).message})`);
    }
    // As kubectl and client-node's loadFromFile: files it names relative to itself are beside it.
    kc.makePathsAbsolute(dirname(resolve(path)));
  } else if (source.env.KUBERNETES_SERVICE_HOST && (await access(SERVICE_ACCOUNT_TOKEN).then(() => true, () => false))) {
    kc.loadFromCluster();
  } else {
    throw new ConfigError('no kubeconfig: pass its path (as the argument or --kubeconfig), set KUBECONFIG, or run in a pod with a service account');
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new ConfigError(`kubeconfig ${path ?? '(in-cluster)'}: its current context ${quote(kc.getCurrentContext())} names no cluster; set current-context`);
  let server: URL;
  try {
    server = new URL(cluster.server);
  } catch {
    throw new ConfigError(`kubeconfig ${path ?? '(in-cluster)'}: cluster ${quote(cluster.name)} has no valid server URL (${quote(cluster.server)})`);
  }
  honorTlsServerName(kc);
  // client-node refuses every request to such a server, which would look like an API outage retried until --wait-timeout.
  if (server.protocol === 'http:' && !cluster.skipTLSVerify && !cluster.proxyUrl) {
    throw new ConfigError(
      `kubeconfig ${path ?? '(in-cluster)'}: cluster ${quote(cluster.name)} server ${quote(cluster.server)} is plain HTTP, which the Kubernetes client refuses unless the cluster entry sets insecure-skip-tls-verify: true; use the API server's https:// URL`,
    );
  }
  await checkCredentials(kc, path ?? '(in-cluster)');
  return kc;
}

/**
 * Reads the files the kubeconfig names (CA, client certificate and key) and runs the user's
 * exec credential plugin once, at start: a file missing or a plugin that fails is a setting to
 * fix, not an outage to retry until --wait-timeout. client-node keeps what the plugin printed
 * until the credential's expirationTimestamp, and runs it again after.
 */
async function checkCredentials(kc: KubeConfig, path: string): Promise<void> {
  const user = kc.getCurrentUser();
  const command = user?.exec?.command ?? user?.authProvider?.config?.exec?.command;
  try {
    await kc.applyToHTTPSOptions({});
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== undefined && e.path !== undefined && !e.syscall?.startsWith('spawn')) {
      throw new ConfigError(`kubeconfig ${path}: cannot read ${quote(e.path)}, which it names (${e.code}); check the path and the volume mount`);
    }
    if (user === null || command === undefined) throw new ConfigError(`kubeconfig ${path}: its credentials cannot be used (${quote(e.message.slice(0, 200))})`);
    const why =
      e instanceof SyntaxError
        ? `printed no ExecCredential JSON on stdout (${e.message})`
        : e.syscall?.startsWith('spawn')
          ? `cannot be run (${e.code ?? e.message})`
          : e instanceof TypeError
            ? `printed an ExecCredential without a status (${e.message})`
            : `exited non-zero${e.message.trim() ? `, printing ${quote(e.message.trim().slice(0, 200))}` : ' and printed nothing on stderr'}`;
    throw new ConfigError(`kubeconfig ${path}: user ${quote(user.name)}: its exec credential plugin ${quote(command)} ${why}; fix the plugin or the kubeconfig`);
  }
}

/**
 * client-node applies a cluster's `tls-server-name` to its generated API clients only: the
 * list, watch and JSON requests lbdns makes would send the server's host as SNI and check the
 * certificate against it. Every request made with this kubeconfig now uses it.
 */
function honorTlsServerName(kc: KubeConfig): void {
  const apply = kc.applyToHTTPSOptions.bind(kc);
  kc.applyToHTTPSOptions = async (opts) => {
    const serverName = kc.getCurrentCluster()?.tlsServerName;
    if (serverName && opts.servername === undefined) opts.servername = serverName;
    return apply(opts);
  };
}

/**
 * Connects to `address` instead of the kubeconfig server's host, which stays the TLS server
 * name: the certificate is checked against the name as usual. For a server name only this
 * node's CoreDNS answers (api-int after a full cluster shutdown).
 */
export function pinServer(kc: KubeConfig, address: string): void {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return;
  const url = new URL(cluster.server);
  const serverName = cluster.tlsServerName ?? url.hostname;
  url.hostname = address.includes(':') ? `[${address}]` : address;
  const server = url.toString().replace(/\/$/, '');
  kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server, tlsServerName: serverName } : c));
}

/** The host the kubeconfig's server URL names, without an IPv6 literal's brackets: after pinServer, the address it connects to. */
export function pinnedAddress(kc: KubeConfig): string | undefined {
  const server = kc.getCurrentCluster()?.server;
  return server === undefined ? undefined : new URL(server).hostname.replace(/^\[|\]$/g, '');
}
