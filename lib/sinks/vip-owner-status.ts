import { networkInterfaces } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { canonicalIp } from '../grammar/ip.js';
import { httpStatusOf } from '../kube/api-error.js';
import { listJson } from '../kube/list-json.js';
import { sendJson } from '../kube/send-json.js';
import { FIELD_MANAGER } from '../kube/client.js';
import { HOSTED_NET_SERVICES, type ApiIntRollout } from '../sources/hosted-net-services.js';
import type { NodeApiInt } from '../model.js';

/** What HostedNetServices `status` says, as far as this node writes it. */
export interface VipOwnerStatus {
  readonly apiServerInternalIpOwner?: string | null;
  readonly ingressIpOwner?: string | null;
  /** What each node's CoreDNS answers for api-int. */
  readonly nodes?: readonly NodeApiInt[];
  readonly conditions?: readonly Condition[];
}

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
  /** The spec's generation the condition describes: `oc wait` can tell a verdict on the spec it just changed from one on the spec before. */
  readonly observedGeneration?: number;
}

/** This node's view: which VIPs its interfaces hold, and, from the API VIP's holder, how api-int is served. */
export interface VipView {
  readonly nodeName: string;
  readonly holdsApiVip: boolean;
  readonly holdsIngressVip: boolean;
  /**
   * Writes the conditions though it does not hold the API VIP: no node holds it (under a
   * UserManaged LB the VIP fields name the user's LB), and this node is the first Node by name.
   */
  readonly writesConditions?: boolean;
  /** ApiIntServed and Degraded, written by the API VIP's holder (or the node that writesConditions) only. */
  readonly apiInt?: { readonly served: string; readonly pending: string | undefined };
  /** The addresses this node's CoreDNS answers for api-int, comma-separated. */
  readonly apiIntServes: string;
  /** Which Nodes answer api-int where it is asked to be, from status.nodes: ApiIntOnAllNodes, written with the other conditions. */
  readonly rollout?: ApiIntRollout;
  /** The HostedNetServices metadata.generation this view was computed from. */
  readonly generation?: number;
}

/** The addresses of this node's interfaces, canonical. */
export function localAddresses(): Set<string> {
  return new Set(
    Object.values(networkInterfaces())
      .flat()
      .flatMap((a) => (a ? (canonicalIp(a.address) ?? []) : [])),
  );
}

function condition(type: string, status: Condition['status'], reason: string, message: string, previous: readonly Condition[], now: string, generation: number | undefined): Condition {
  const before = previous.find((c) => c.type === type);
  // A transition time moves only when the status does, as Kubernetes conditions do.
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type, status, lastTransitionTime, reason, message, ...(generation === undefined ? {} : { observedGeneration: generation }) };
}

/**
 * The status change this node's view calls for, or undefined: a node records itself as a
 * VIP's owner when it holds the VIP and the field names another; it clears the field only if
 * the field still names itself. Pure: the same status and view give the same patch.
 */
export function planVipOwners(current: VipOwnerStatus, view: VipView, now: string, specGeneration?: number): VipOwnerStatus | undefined {
  const patch: { apiServerInternalIpOwner?: string | null; ingressIpOwner?: string | null; nodes?: NodeApiInt[]; conditions?: Condition[] } = {};
  const own = (field: 'apiServerInternalIpOwner' | 'ingressIpOwner', holds: boolean) => {
    if (holds && current[field] !== view.nodeName) patch[field] = view.nodeName;
    if (!holds && current[field] === view.nodeName) patch[field] = null;
  };
  own('apiServerInternalIpOwner', view.holdsApiVip);
  own('ingressIpOwner', view.holdsIngressVip);
  // A merge patch replaces the whole list: this node's entry changed in the list read, which the
  // resourceVersion precondition keeps from overwriting another node's meanwhile.
  const nodes = current.nodes ?? [];
  if (nodes.find((n) => n.name === view.nodeName)?.apiIntServes !== view.apiIntServes) {
    patch.nodes = [...nodes.filter((n) => n.name !== view.nodeName), { name: view.nodeName, apiIntServes: view.apiIntServes }].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  // A view of an older spec than the object now holds says nothing of the new one: its conditions wait for the view that follows it.
  const ofThisSpec = view.generation === undefined || specGeneration === undefined || specGeneration <= view.generation;
  if ((view.holdsApiVip || view.writesConditions === true) && view.apiInt && ofThisSpec) {
    const previous = current.conditions ?? [];
    const { served, pending } = view.apiInt;
    const conditions = [
      condition('ApiIntServed', 'True', pending === undefined ? 'AsAsked' : 'MovePending', served, previous, now, view.generation),
      condition('Degraded', pending === undefined ? 'False' : 'True', pending === undefined ? 'AsExpected' : 'ApiIntMoveNotVerified', pending ?? 'api-int is served where it was asked to be', previous, now, view.generation),
      ...(view.rollout === undefined ? [] : [condition('ApiIntOnAllNodes', view.rollout.complete ? 'True' : 'False', view.rollout.complete ? 'AllNodes' : 'NodesPending', view.rollout.summary, previous, now, view.generation)]),
    ];
    // lbdns alone writes this object's conditions: one it no longer computes (ApiIntOnAllNodes with api-int withheld) is removed.
    const same = conditions.length === previous.length && conditions.every((c) => previous.some((p) => p.type === c.type && p.status === c.status && p.reason === c.reason && p.message === c.message && p.observedGeneration === c.observedGeneration));
    if (!same) patch.conditions = conditions;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

interface HostedNetServicesObject {
  readonly metadata?: { readonly resourceVersion?: string; readonly generation?: number };
  readonly status?: VipOwnerStatus;
}

const CONFLICT = 409;

/**
 * Reads the object, and writes what this node's view calls for with its resourceVersion as
 * precondition, so two nodes never overwrite each other's owner blindly: on a conflict it reads
 * again and decides again. No object (or no CRD yet): nothing to do, and the view stays to be
 * written once the object exists.
 */
export async function publishVipOwners(kc: KubeConfig, view: VipView, attempts = 3): Promise<'written' | 'unchanged' | 'no-object'> {
  for (let attempt = 1; ; attempt++) {
    const list = await listJson(kc, HOSTED_NET_SERVICES.path, { fieldSelector: `metadata.name=${HOSTED_NET_SERVICES.name}` }).catch((err: unknown) => {
      if (httpStatusOf(err) === 404) return { items: [] };
      throw err;
    });
    const object = list.items[0] as HostedNetServicesObject | undefined;
    if (object === undefined) return 'no-object';
    const patch = planVipOwners(object.status ?? {}, view, new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), object.metadata?.generation);
    if (patch === undefined) return 'unchanged';
    try {
      await sendJson(kc, 'PATCH', `${HOSTED_NET_SERVICES.path}/${HOSTED_NET_SERVICES.name}/status?fieldManager=${FIELD_MANAGER}`, { metadata: { resourceVersion: object.metadata?.resourceVersion }, status: patch }, 'application/merge-patch+json');
      return 'written';
    } catch (err) {
      if ((err as { code?: unknown }).code !== CONFLICT || attempt >= attempts) throw err;
    }
  }
}
