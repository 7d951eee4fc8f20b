import type { KubeConfig } from '@kubernetes/client-node';
import pRetry, { AbortError } from 'p-retry';
import { ConfigError, isApiUnreachable, KubeAccessError, KubeError } from '../errors.js';
import { planStatusPatch, type LbIpLists, type StatusPlan } from './infra-status-plan.js';
import { httpStatusOf, kubeErrorFrom } from '../kube/api-error.js';
import { REQUEST_TIME_LIMIT_MS, timeLimited } from '../kube/time-limit.js';
import { FIELD_MANAGER, kubeModule } from '../kube/client.js';
import type { Logger } from '../runtime/log.js';
import type { LbName } from '../model.js';
import { platformStatusKey, type Infrastructure, STATUS_LISTS } from '../sources/infra-lbs.js';

const INFRA = { group: 'config.openshift.io', version: 'v1', plural: 'infrastructures', name: 'cluster' } as const;
const OBJECT = 'infrastructures.config.openshift.io/cluster';

export interface PublishOptions {
  readonly owned: readonly LbName[];
  /** Set an unset dnsType to ClusterHosted (see publishTarget). */
  readonly setDnsType?: boolean;
  readonly dryRun: boolean;
  /** LBs one of whose host names has not answered (partialLbs): their lists may grow, never shrink. */
  readonly partial?: readonly LbName[];
  /** A one-shot command's --wait-timeout, as a time (ms since the epoch): an API server unreachable or failing is asked again until then. */
  readonly deadline?: number;
  readonly log: Logger;
  readonly stdout: { write(chunk: string): unknown };
}

/** Attempts after a 409 Conflict. */
const CONFLICT_RETRIES = 5;

export interface PublishResult {
  readonly plan: StatusPlan;
  readonly patched: boolean;
}

interface StatusBody {
  message?: string;
  details?: { causes?: { field?: string; message?: string }[] };
}

/** A 422 as the admin needs it: one line per field the API server refused. */
function invalidError(err: unknown): ConfigError {
  let body: StatusBody = {};
  try {
    const raw = (err as { body?: unknown }).body;
    body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as StatusBody;
  } catch {
    body = {};
  }
  const causes = body.details?.causes ?? [];
  const lines = causes.length > 0 ? causes.map((c) => `${c.field ?? '(object)'}: ${c.message ?? ''}`) : [body.message ?? String(err)];
  return new ConfigError(`the API server refused the status update of ${OBJECT}:`, { details: lines });
}

/**
 * Reads the Infrastructure, plans, and merge-patches its status subresource with the
 * resourceVersion it read as a precondition; a 409 (someone wrote in between) re-reads and
 * plans again, so a concurrent writer's change is kept. Sends nothing when the status
 * already says what lbdns would write.
 */
export async function publishLbIps(kc: KubeConfig, lists: LbIpLists, opts: PublishOptions): Promise<PublishResult> {
  const { deadline } = opts;
  if (deadline === undefined) return publishTries(kc, lists, opts);
  // Beyond a few quick tries for conflicts: an API server restarting is waited out, as reading the cluster is.
  return pRetry(() => publishTries(kc, lists, opts), {
    retries: Number.MAX_SAFE_INTEGER,
    minTimeout: 250,
    maxTimeout: 5000,
    // Logged here: p-retry reports every failure before asking whether to retry, refusals too.
    shouldRetry: ({ error }) => {
      const again = (isApiUnreachable(error) || (error instanceof KubeError && error.status === 409)) && Date.now() < deadline;
      if (again) opts.log.warn('status update failed; asking again until --wait-timeout', { error: error.message });
      return again;
    },
  });
}

async function publishTries(kc: KubeConfig, lists: LbIpLists, opts: PublishOptions): Promise<PublishResult> {
  const k8s = await kubeModule();
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const mergePatch = await timeLimited(REQUEST_TIME_LIMIT_MS, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  const limited = await timeLimited(REQUEST_TIME_LIMIT_MS);
  return pRetry(
    async (): Promise<PublishResult> => {
      let infra: Infrastructure;
      try {
        infra = (await custom.getClusterCustomObject(INFRA, limited)) as Infrastructure;
      } catch (err) {
        if (httpStatusOf(err) === 404) throw new AbortError(new ConfigError(`${OBJECT} does not exist: is this an OpenShift cluster?`));
        const error = kubeErrorFrom(err, `get ${OBJECT}`);
        throw error instanceof KubeAccessError ? new AbortError(error) : error;
      }
      let plan: StatusPlan;
      try {
        plan = planStatusPatch(infra, lists, opts.owned, opts.setDnsType === true, opts.partial);
      } catch (err) {
        // A refusal of the plan (a dnsType lbdns may not write over) is not worth a re-read.
        throw new AbortError(err as Error);
      }
      for (const lb of plan.skipped) opts.log.warn('no IP known for this LB, or not all of them (a host name has not answered); its status list is left as it is', { list: STATUS_LISTS[lb] });
      if (plan.patch === null) return { plan, patched: false };
      const key = platformStatusKey(plan.platform);
      const patch = async (dryRun: boolean): Promise<Infrastructure> => {
        try {
          // fieldManager: the object's managedFields name lbdns as the owner of the lists it writes.
          return (await custom.patchClusterCustomObjectStatus({ ...INFRA, body: plan.patch, fieldManager: FIELD_MANAGER, ...(dryRun ? { dryRun: 'All' } : {}) }, mergePatch)) as Infrastructure;
        } catch (err) {
          const status = httpStatusOf(err);
          if (status === 409) throw kubeErrorFrom(err, `patch ${OBJECT} status`);
          if (status === 422) throw new AbortError(invalidError(err));
          const error = kubeErrorFrom(err, `patch ${OBJECT} status`);
          throw error instanceof KubeAccessError ? new AbortError(error) : error;
        }
      };
      // Only the API server's schema knows whether this platform has the field; it prunes it
      // silently. The first write asks with a dry run, so a refusal leaves nothing behind; and
      // --dry-run asks the same dry run, so what it shows is what the server would take.
      const firstWrite = infra.status?.platformStatus?.[key]?.cloudLoadBalancerConfig == null;
      const checked = firstWrite || opts.dryRun ? await patch(true) : undefined;
      if (firstWrite && checked && checked.status?.platformStatus?.[key]?.cloudLoadBalancerConfig == null) {
        throw new AbortError(new ConfigError(`the API server drops status.platformStatus.${key}.cloudLoadBalancerConfig: this cluster's Infrastructure CRD has no such field for platform ${plan.platform}, so there is nowhere to publish the LB IPs`));
      }
      if (opts.dryRun) {
        // Printed once the server took it: a refused patch prints nothing, and a 409's re-read does not print it twice.
        opts.stdout.write(`${JSON.stringify(plan.patch, null, 2)}\n`);
        return { plan, patched: false };
      }
      await patch(false);
      opts.log.info('Infrastructure status updated', { lists: plan.changed.map((lb) => STATUS_LISTS[lb]), platform: plan.platform });
      return { plan, patched: true };
    },
    {
      retries: CONFLICT_RETRIES,
      minTimeout: 50,
      maxTimeout: 2000,
      // API failures (409, 5xx, the server unreachable) are worth a re-read; a refusal of the plan is not.
      shouldRetry: ({ error }) => error instanceof KubeError,
      onFailedAttempt: ({ error, retriesLeft }) => opts.log.warn('status update failed; re-reading and retrying', { error: error.message, retriesLeft }),
    },
  );
}
