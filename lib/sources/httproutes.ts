import { validateDnsName } from '../grammar/validate.js';
import { sectionNameOf } from './gateways.js';
import { describeObject, elementsOf, identityOf, validated, warnIgnored, type ApiObjectMeta, type Warn } from './untrusted.js';

/** `httproutes.gateway.networking.k8s.io` v1 as far as lbdns reads it; every field may be missing. */
export interface HTTPRoute {
  readonly metadata?: ApiObjectMeta & { readonly creationTimestamp?: unknown };
  readonly spec?: { readonly hostnames?: unknown };
  readonly status?: { readonly parents?: unknown };
}

/** The hostnames of one route a Gateway accepted (status.parents[] with Accepted=True). */
export interface RouteAttachment {
  /** `NAMESPACE/NAME` of the Gateway. */
  readonly gateway: string;
  /** The listener the route attached to; undefined: every listener of the Gateway. */
  readonly sectionName: string | undefined;
  /** Lower case; may start with `*.`. */
  readonly hostnames: readonly string[];
}

const GATEWAY_GROUP = 'gateway.networking.k8s.io';

function accepted(conditions: unknown): boolean {
  return Array.isArray(conditions) && conditions.some((c: unknown) => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'Accepted' && (c as { status?: unknown }).status === 'True');
}

/** Every (Gateway, listener) the HTTPRoute is accepted by, with the route's host names. */
export function routeAttachments(route: HTTPRoute, warn: Warn): RouteAttachment[] {
  if (typeof route !== 'object' || route === null || route.metadata?.deletionTimestamp) return [];
  const object = describeObject('httproute', route.metadata);
  const id = identityOf(route.metadata, object, warn, 'route not used');
  if (id === undefined) return [];
  const hostnames = elementsOf(route.spec?.hostnames, `${object} spec.hostnames`, warn).flatMap(({ item, where }) => {
    const name = validated(where, item, warn, () => validateDnsName(where, item, { allowWildcard: true, minLabels: 2 }));
    return name === undefined ? [] : [name];
  });
  if (hostnames.length === 0) return [];
  const out: RouteAttachment[] = [];
  for (const { item, where } of elementsOf(route.status?.parents, `${object} status.parents`, warn)) {
    const parent = item as { parentRef?: { group?: unknown; kind?: unknown; namespace?: unknown; name?: unknown; sectionName?: unknown }; conditions?: unknown } | null;
    const ref = parent?.parentRef;
    if (typeof ref !== 'object' || ref === null || !accepted(parent?.conditions)) continue;
    if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const namespace = ref.namespace ?? id.namespace;
    if (typeof namespace !== 'string' || typeof ref.name !== 'string') {
      warnIgnored(warn, `${where}.parentRef`, ref, 'does not name a Gateway');
      continue;
    }
    const sectionName = ref.sectionName === undefined || ref.sectionName === null ? undefined : sectionNameOf(ref.sectionName, `${where}.parentRef.sectionName`, warn);
    if (ref.sectionName !== undefined && ref.sectionName !== null && sectionName === undefined) continue;
    out.push({ gateway: `${namespace}/${ref.name}`, sectionName, hostnames });
  }
  return out;
}
