import type { V1Node } from '@kubernetes/client-node';
import type { SourceContribution } from './cluster-data.js';
import type { NodeEntry } from '../model.js';
import { nodeFqdn, nodeNameConflict, validateDnsName } from '../grammar/validate.js';
import type { Selection } from '../kube/json-select.js';
import { describeObject, distinctCapped, elementsOf, ipFromApi, validated, warnIgnored, type Warn } from './untrusted.js';

function nameOf(node: V1Node, object: string, warn: Warn): string | undefined {
  const where = `${object} metadata.name`;
  const value: unknown = node.metadata?.name;
  return validated(where, value, warn, () => validateDnsName(where, value), 'node not served');
}

/** InternalIP addresses only: the ones other nodes reach it on. ExternalIP, Hostname and the DNS kinds are not served. */
function internalIpsOf(node: V1Node, object: string, warn: Warn): string[] {
  const where = `${object} status.addresses`;
  const found = elementsOf(node.status?.addresses, where, warn).flatMap(({ item, where: at }) => {
    if (typeof item !== 'object' || item === null || (item as { type?: unknown }).type !== 'InternalIP') return [];
    const ip = ipFromApi((item as { address?: unknown }).address, `${at}.address`, warn);
    return ip === undefined ? [] : [{ item: ip, where: `${at}.address` }];
  });
  return distinctCapped(found, (ip) => ip, where, warn);
}

/**
 * The parts of a Node list the monitor builds as the answer arrives (see JsonSelector): the
 * list's resourceVersion and continue token, and of each Node what `nodeProjection` keeps.
 * A page of Nodes is otherwise mostly image lists, decoded only to be dropped.
 */
export const NODE_LIST_SELECTION: Selection = {
  metadata: { resourceVersion: true, continue: true },
  items: { '*': { metadata: { name: true, namespace: true, resourceVersion: true }, status: { addresses: true } } },
};

/**
 * What `nodesContribution` reads of a Node, and nothing else: the monitor keeps every Node of
 * the cluster for as long as it runs. An address it would skip without a word (another type,
 * or not an object) becomes null, so the ones it reads keep their index for its warnings; a
 * malformed list is kept as it came, so it is still reported.
 */
export function nodeProjection(node: V1Node): V1Node {
  if (typeof node !== 'object' || node === null) return node;
  const { name, namespace, resourceVersion } = node.metadata ?? {};
  const addresses: unknown = node.status?.addresses;
  const kept = Array.isArray(addresses)
    ? addresses.map((a: unknown) => {
        const entry = a as { type?: unknown; address?: unknown } | null;
        return typeof entry === 'object' && entry !== null && entry.type === 'InternalIP' ? { type: entry.type, address: entry.address } : null;
      })
    : addresses;
  return { metadata: { name, namespace, resourceVersion }, status: { addresses: kept } } as V1Node;
}

const sortKey = (node: V1Node): string => (typeof node === 'object' && node !== null && typeof node.metadata?.name === 'string' ? node.metadata.name.toLowerCase() : '');

/**
 * Node name → its InternalIPs (both families), sorted by name; a node with none is skipped,
 * and so is one whose name as served (`<name>.<domain>`) an earlier node already has, or that
 * would collide with api, api-int or *.apps (see nodeNameConflict).
 */
export function nodesContribution(nodes: readonly V1Node[], warn: Warn, domain: string): SourceContribution {
  const byName = new Map<string, NodeEntry>();
  const fqdns = new Set<string>();
  // In name order, not the cache's: of two Nodes served under one name, every monitor keeps the same one.
  const keyed = nodes.map((node) => ({ node, key: sortKey(node) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const { node } of keyed) {
    if (typeof node !== 'object' || node === null) {
      warnIgnored(warn, 'node list item', node, 'is not an object');
      continue;
    }
    const object = describeObject('node', node.metadata);
    const name = nameOf(node, object, warn);
    if (name === undefined) continue;
    const fqdn = nodeFqdn(name, domain);
    if (byName.has(name) || fqdns.has(fqdn)) {
      warnIgnored(warn, `${object} metadata.name`, name, `names a node already listed (${fqdn})`, 'node not served twice');
      continue;
    }
    const conflict = nodeNameConflict(fqdn, domain);
    if (conflict !== undefined) {
      warnIgnored(warn, `${object} metadata.name`, name, conflict, 'node not served');
      continue;
    }
    const ips = internalIpsOf(node, object, warn);
    if (ips.length === 0) {
      warnIgnored(warn, `${object} status.addresses`, undefined, 'has no valid InternalIP address', 'node not served');
      continue;
    }
    byName.set(name, { name, ips });
    fqdns.add(fqdn);
  }
  return { nodes: [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}
