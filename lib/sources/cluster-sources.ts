import type { KubeConfig, KubernetesObject, V1ConfigMap, V1Node, V1Service } from '@kubernetes/client-node';
import { mergeContributions, type ClusterData, type LocalSays, type SourceContribution } from './cluster-data.js';
import type { KubeError } from '../errors.js';
import { watchCollection, type WatchedCollection, type WatchOptions } from '../kube/informer.js';
import { watchWhenServed } from '../kube/when-served.js';
import { listJson } from '../kube/list-json.js';
import type { Selection } from '../kube/json-select.js';
import type { Logger } from '../runtime/log.js';
import { ROLE_TRAITS, type GatewayTtls, type LbName, type Role } from '../model.js';
import { dnsRecordPolicyLog, dnsRecordsContribution, type DNSRecord } from './dnsrecords.js';
import { infrastructureContribution, type Infrastructure } from './infra-lbs.js';
import { lbConfigContribution } from './lb-config.js';
import { onPremContribution, onPremPlatformOf } from './on-prem-vips.js';
import { HOSTED_NET_SERVICES, switchesContribution, type HostedNetServices } from './hosted-net-services.js';
import { NODE_LIST_SELECTION, nodeProjection, nodesContribution } from './nodes.js';
import { routerServiceContribution } from './router-service.js';
import { GATEWAY_COLLECTIONS, GatewayInputs, zoneLabelSelector } from './gateway-sources.js';
import { gatewayProjection, type Gateway } from './gateways.js';
import type { Warn } from './untrusted.js';

/** The cluster side of the pipeline: merged, sanitised data from every watched source. */
export interface ClusterSources {
  data(): ClusterData;
  /** Every source has listed once. */
  synced(): boolean;
  /** Sources not listed yet, with the last error each hit. */
  unsynced(): readonly { readonly source: string; readonly error: KubeError | undefined }[];
  stop(): Promise<void>;
}

export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

const DNSRECORD_NAMESPACE = 'openshift-ingress-operator';

/**
 * `corefile` serves names: every source. `infra-status` publishes LB IPs into the
 * Infrastructure status, so it must not read them back from there (a stale IP would feed
 * itself forever), and needs neither nodes nor DNSRecords.
 */
export type SourcePurpose = 'corefile' | 'infra-status';

export interface ClusterSourceOptions {
  readonly kc: KubeConfig;
  /** Read once and stopped (render-corefile, display…): a collection is read at its list, not only once its watch is open. */
  readonly oneShot?: boolean;
  readonly role: Role;
  /** The cluster domain (lower case, no trailing dot): DNSRecords may only name names within it. */
  readonly domain: string;
  /** The cluster-wide TTL, for what the DNSRecord log says a record without its own is served at. */
  readonly ttl: number;
  readonly purpose: SourcePurpose;
  /** The LBs the command uses: a source that speaks only of others is not read. */
  readonly wanted: ReadonlySet<LbName>;
  /**
   * `infra-status` kept current: the Infrastructure is watched for its status alone (it gives
   * no data), so a list another hand overwrites is published again without waiting for an LB
   * to change.
   */
  readonly watchPublished?: boolean;
  readonly ingressService: ObjectRef;
  /** Undefined when neither a flag nor the platform names it: api LBs then come from the Infrastructure status only. */
  readonly lbConfig: ObjectRef | undefined;
  /**
   * An on-prem platform: the Infrastructure's VIPs name api, api-int and `*.apps`, and no
   * router Service of type LoadBalancer exists to read.
   */
  readonly onPrem?: boolean;
  /** What the flags already say: sources that could only repeat it are not watched. */
  readonly localSays: LocalSays;
  /** --gateway-zone: Gateway DNS reads Kuadrant DNSRecords, Gateways, DNSPolicies and the kube-system Namespace when non-empty. */
  readonly gatewayZones?: readonly string[];
  readonly gatewayTtls?: GatewayTtls;
  readonly log: Logger;
  readonly onChange: () => void;
  readonly onRestart?: (source: string, error: KubeError) => void;
  /** The sources' names (as onRestart names them), before any of them starts. */
  readonly onStarting?: (sources: readonly string[]) => void;
  /**
   * Every warning of every computation of a source's contribution (`fresh` when the previous
   * computation did not have it): data refused from an object, for Events and metrics.
   */
  readonly onWarning?: (warning: SourceWarning) => void;
}

export interface SourceWarning {
  readonly source: string;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly fresh: boolean;
}

interface Source {
  readonly collection: WatchedCollection<KubernetesObject>;
  readonly contribution: { current: SourceContribution };
}

/**
 * A warning is logged when it first appears, not on every event that recomputes the same
 * contribution: a malformed Service status would otherwise be logged on each Node update.
 */
function dedupedWarn(log: Logger, source: string, onWarning: ClusterSourceOptions['onWarning']): { warn: Warn; flush(): void } {
  let previous = new Set<string>();
  let current = new Set<string>();
  return {
    warn: (msg, fields) => {
      current.add(msg);
      const fresh = !previous.has(msg);
      if (fresh) log.warn(msg, { source, ...fields });
      onWarning?.({ source, msg, fields, fresh });
    },
    flush: () => {
      previous = current;
      current = new Set();
    },
  };
}

type Extract = (items: KubernetesObject[], warn: Warn) => SourceContribution;

interface SourceSpec {
  readonly name: string;
  readonly what: string;
  readonly path: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  /** For the large collections; see WatchOptions. */
  readonly pageSize?: number;
  readonly project?: (obj: KubernetesObject) => KubernetesObject;
  /** What to build of each list answer (see listJson); the whole answer by default. */
  readonly select?: Selection;
  readonly extract: Extract;
  /** Served by a CRD the admin may install after lbdns starts: read as empty until it is (see watchWhenServed). */
  readonly crdMayFollow?: { readonly absent: string; readonly served: string };
}

/** While the HostedNetServices CRD is not installed: how often each node asks whether it is now. */
const CRD_PROBE_MS = 10_000;

const byName = (name: string) => `metadata.name=${name}`;

/**
 * client-go's page size. Each page costs kube-apiserver a fixed time on top of its size, so
 * fewer pages make the first Corefile sooner; only names and addresses are built of a page as
 * it arrives, so a larger page costs the monitor no memory (bench/RESULTS.md).
 */
const NODE_PAGE_SIZE = 500;

function sourceSpecs(opts: ClusterSourceOptions, gateway: GatewayInputs | undefined): SourceSpec[] {
  const corefile = opts.purpose === 'corefile';
  const traits = ROLE_TRAITS[opts.role];
  const served = (lb: LbName) => !corefile || traits.serves.includes(lb);
  const needs = (...lbs: LbName[]) => lbs.some((lb) => served(lb) && opts.wanted.has(lb) && !opts.localSays.lbs.has(lb));
  const specs: SourceSpec[] = [];

  if (needs('ingress') && !opts.onPrem) {
    const { namespace, name } = opts.ingressService;
    specs.push({
      name: `service ${namespace}/${name}`,
      what: `list services in ${namespace}`,
      path: `/api/v1/namespaces/${namespace}/services`,
      fieldSelector: byName(name),
      extract: (items, warn) => routerServiceContribution(items[0] as V1Service | undefined, warn),
    });
  }
  if (opts.lbConfig && needs('api', 'api-int')) {
    const { namespace, name } = opts.lbConfig;
    specs.push({
      name: `configmap ${namespace}/${name}`,
      what: `list configmaps in ${namespace}`,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      fieldSelector: byName(name),
      extract: (items, warn) => lbConfigContribution(items[0] as V1ConfigMap | undefined, warn),
    });
  }
  if (corefile && (opts.onPrem ? needs('api', 'api-int', 'ingress') : needs('api', 'api-int'))) {
    specs.push({
      name: 'infrastructure cluster',
      what: 'list infrastructures.config.openshift.io',
      path: '/apis/config.openshift.io/v1/infrastructures',
      fieldSelector: byName('cluster'),
      extract: (items, warn) => {
        const infra = items[0] as Infrastructure | undefined;
        return onPremPlatformOf(infra) ? onPremContribution(infra, warn) : infrastructureContribution(infra, warn);
      },
    });
  }
  if (!corefile && opts.watchPublished === true) {
    specs.push({
      name: 'infrastructure cluster (published lists)',
      what: 'list infrastructures.config.openshift.io',
      path: '/apis/config.openshift.io/v1/infrastructures',
      fieldSelector: byName('cluster'),
      extract: () => ({}),
    });
  }
  if (corefile && opts.onPrem) {
    specs.push({
      name: `hostednetservices ${HOSTED_NET_SERVICES.name}`,
      what: `list hostednetservices.${HOSTED_NET_SERVICES.group}`,
      path: HOSTED_NET_SERVICES.path,
      fieldSelector: byName(HOSTED_NET_SERVICES.name),
      extract: (items, warn) => switchesContribution(items[0] as HostedNetServices | undefined, warn),
      crdMayFollow: {
        absent: 'no HostedNetServices CRD (or it was removed): every name is served and api-int answers the API VIP; its switches are read once it is installed',
        served: 'HostedNetServices CRD installed: its switches are read now',
      },
    });
  }
  if (corefile && traits.clusterNames) {
    const report = dnsRecordPolicyLog((msg, fields) => opts.log.info(msg, fields), opts.ttl);
    specs.push({
      name: `dnsrecords in ${DNSRECORD_NAMESPACE}`,
      what: `list dnsrecords.ingress.operator.openshift.io in ${DNSRECORD_NAMESPACE}`,
      path: `/apis/ingress.operator.openshift.io/v1/namespaces/${DNSRECORD_NAMESPACE}/dnsrecords`,
      extract: (items, warn) => {
        const contribution = dnsRecordsContribution(items as DNSRecord[], warn, opts.domain);
        report(contribution);
        return contribution;
      },
    });
  }
  if (corefile && traits.clusterNames && !opts.localSays.nodes) {
    specs.push({
      name: 'nodes',
      what: 'list nodes',
      path: '/api/v1/nodes',
      pageSize: NODE_PAGE_SIZE,
      select: NODE_LIST_SELECTION,
      project: (obj) => nodeProjection(obj as V1Node),
      extract: (items, warn) => nodesContribution(items as V1Node[], warn, opts.domain),
    });
  }
  if (gateway && corefile && traits.clusterNames) {
    for (const { kind, path, what, fieldSelector } of GATEWAY_COLLECTIONS) {
      specs.push({
        name: `${kind} (gateway dns)`,
        what,
        path,
        ...(fieldSelector === undefined ? {} : { fieldSelector }),
        ...(kind === 'dnsrecords' ? { labelSelector: zoneLabelSelector(opts.gatewayZones ?? []) } : {}),
        ...(kind === 'gateways' ? { project: (obj: KubernetesObject) => gatewayProjection(obj as Gateway) as KubernetesObject } : {}),
        extract: (items) => {
          gateway.set(kind, items);
          return {};
        },
      });
    }
  }
  return specs;
}

/** Starts one list+watch per source the role needs; each source's contribution is recomputed on its own events only. */
export async function startClusterSources(opts: ClusterSourceOptions): Promise<ClusterSources> {
  const zones = opts.gatewayZones ?? [];
  const gateway = zones.length > 0 ? new GatewayInputs(zones, dedupedWarn(opts.log, 'gateway dns', opts.onWarning), opts.gatewayTtls) : undefined;
  const specs = sourceSpecs(opts, gateway);
  opts.onStarting?.(specs.map((s) => s.name));
  let started: Source[] = [];
  const sources = await Promise.all(
    specs.map(async (spec): Promise<Source> => {
      const warnings = dedupedWarn(opts.log, spec.name, opts.onWarning);
      const contribution: { current: SourceContribution } = { current: {} };
      const watch: WatchOptions<KubernetesObject> = {
        kc: opts.kc,
        name: spec.name,
        what: spec.what,
        path: spec.path,
        ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
        ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
        ...(spec.pageSize === undefined ? {} : { pageSize: spec.pageSize }),
        ...(spec.project === undefined ? {} : { project: spec.project }),
        // Plain JSON, as the watch events come (see listJson).
        list: ({ onContinue, ...page }) => listJson(opts.kc, spec.path, { fieldSelector: spec.fieldSelector, labelSelector: spec.labelSelector, ...page }, spec.select, onContinue),
        log: opts.log,
        ...(opts.oneShot === true ? { readAtList: true } : {}),
        onRestart: (error) => opts.onRestart?.(spec.name, error),
        onChange: (items) => {
          contribution.current = spec.extract(items, warnings.warn);
          warnings.flush();
          opts.onChange();
        },
      };
      const { crdMayFollow } = spec;
      let probeFailure: string | undefined;
      const collection =
        crdMayFollow === undefined
          ? await watchCollection(watch)
          : await watchWhenServed({
              ...watch,
              probeMs: CRD_PROBE_MS,
              onAbsent: () => opts.log.info(crdMayFollow.absent, { source: spec.name, crd: 'manifests/crd-hostednetservices.yaml' }),
              onServed: () => {
                probeFailure = undefined;
                opts.log.info(crdMayFollow.served, { source: spec.name });
              },
              onProbeFailed: (error) => {
                // Each distinct failure once: the probe repeats every CRD_PROBE_MS.
                if (error.message !== probeFailure) opts.log.warn(`${spec.what} failed; asking again`, { source: spec.name, error: error.message, retryInMs: CRD_PROBE_MS });
                probeFailure = error.message;
              },
            });
      return { collection, contribution };
    }),
  );
  started = sources;
  opts.onChange();
  return {
    data: (): ClusterData => mergeContributions([...started.map((s) => s.contribution.current), ...(gateway ? [gateway.contribution()] : [])]),
    synced: () => started.length === specs.length && started.every((s) => s.collection.synced()),
    unsynced: () => started.filter((s) => !s.collection.synced()).map((s) => ({ source: s.collection.name, error: s.collection.lastError() })),
    stop: async () => {
      await Promise.all(started.map((s) => s.collection.stop()));
    },
  };
}
