import type { KubeConfig } from '@kubernetes/client-node';
import pRetry, { AbortError } from 'p-retry';
import { KubeAccessError } from '../errors.js';
import type { Logger } from '../runtime/log.js';
import type { OnPremPlatform, Platform } from '../model.js';
import { onPremPlatformOf } from './on-prem-vips.js';
import { domainFrom, type DnsConfig } from './cluster-identity.js';
import { platformOf, type Infrastructure } from './infra-lbs.js';
import { httpStatusOf, kubeErrorFrom } from '../kube/api-error.js';
import { kubeModule } from '../kube/client.js';
import { REQUEST_TIME_LIMIT_MS, timeLimited } from '../kube/time-limit.js';

export interface ClusterIdentity {
  readonly infrastructure: Infrastructure | undefined;
  readonly platform: Platform | undefined;
  /** Set on bare metal, vSphere, OpenStack, oVirt and Nutanix: the VIPs come from the Infrastructure. */
  readonly onPrem: OnPremPlatform | undefined;
  readonly domain: string | undefined;
}

/**
 * The cluster-wide facts read once at start: the platform (it names the LB config
 * ConfigMap's namespace and the status field update-infra-status writes) and the cluster
 * domain. Transient failures are retried until `deadline`; 401/403 fail at once, since
 * waiting will not grant an RBAC rule.
 */
/** `read`, retried until `deadline`; a 404 is undefined, 401/403 fail at once. */
async function retried<T>(read: () => Promise<T>, what: string, log: Logger, deadline: number): Promise<T | undefined> {
  return pRetry(
    async () => {
      try {
        return await read();
      } catch (err) {
        if (httpStatusOf(err) === 404) return undefined;
        const error = kubeErrorFrom(err, what);
        if (error instanceof KubeAccessError || Date.now() >= deadline) throw new AbortError(error);
        throw error;
      }
    },
    {
      retries: Number.MAX_SAFE_INTEGER,
      minTimeout: 250,
      maxTimeout: 5000,
      onFailedAttempt: ({ error }) => log.warn('reading the cluster failed; retrying', { what, error: error.message }),
    },
  );
}

export async function readClusterIdentity(kc: KubeConfig, log: Logger, deadline: number): Promise<ClusterIdentity> {
  const k8s = await kubeModule();
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const get = async <T>(plural: string, what: string): Promise<T | undefined> =>
    retried(
      // No request outlives the deadline: a server that takes the request and never answers is a failed attempt.
      async () => (await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural, name: 'cluster' }, await timeLimited(Math.max(250, Math.min(REQUEST_TIME_LIMIT_MS, deadline - Date.now()))))) as T,
      what,
      log,
      deadline,
    );
  const [infrastructure, dns] = await Promise.all([
    get<Infrastructure>('infrastructures', 'get infrastructures.config.openshift.io/cluster'),
    get<DnsConfig>('dnses', 'get dnses.config.openshift.io/cluster'),
  ]);
  const warn = (msg: string, fields: Record<string, unknown>) => log.warn(msg, fields);
  const onPrem = onPremPlatformOf(infrastructure);
  return { infrastructure, platform: platformOf(infrastructure), onPrem, domain: domainFrom(dns, infrastructure, warn) };
}
