import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import type { SourceContribution } from './cluster-data.js';
import type { Endpoint } from '../model.js';
import { describeObject, distinct, elementsOf, endpointFromApi, endpointKey, ipFromApi, warnIgnored, type Warn } from './untrusted.js';

const present = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/**
 * An entry with both fields gives its ip: that is the address the LB serves on now, while
 * the hostname would need a lookup that can fail or lag and can only lead back to it. A
 * malformed ip does not lose a valid hostname in the same entry.
 */
function endpointOfEntry(entry: unknown, where: string, warn: Warn): Endpoint | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    warnIgnored(warn, where, entry, 'is not an object');
    return undefined;
  }
  const { ip, hostname } = entry as V1LoadBalancerIngress;
  if (!present(ip) && !present(hostname)) {
    warnIgnored(warn, where, entry, 'has neither ip nor hostname');
    return undefined;
  }
  if (present(ip)) {
    const address = ipFromApi(ip, `${where}.ip`, warn);
    if (address !== undefined) return { kind: 'ip', ip: address };
  }
  return present(hostname) ? endpointFromApi(hostname, `${where}.hostname`, warn) : undefined;
}

/**
 * The ingress LB from the router Service's `status.loadBalancer.ingress[]`: IPs as they are,
 * hostnames (AWS) to be resolved later. No Service means it was deleted, an explicit change
 * to "no ingress LB", so the list is empty rather than absent. More than 16 entries are
 * kept: the limit is enforced where the list is used, as an error naming the name or the
 * status list, never as a silent cut of the primary LB.
 */
export function routerServiceContribution(service: V1Service | undefined, warn: Warn): SourceContribution {
  if (service === undefined) return { lbs: { ingress: [] } };
  const where = `${describeObject('service', service.metadata)} status.loadBalancer.ingress`;
  const given: unknown = service.status?.loadBalancer?.ingress;
  const found = elementsOf(given, where, warn).flatMap(({ item, where: at }) => {
    const endpoint = endpointOfEntry(item, at, warn);
    return endpoint === undefined ? [] : [{ item: endpoint, where: at }];
  });
  const ingress = distinct(found, endpointKey, warn);
  const refused = ingress.length === 0 && given !== undefined && given !== null && !(Array.isArray(given) && given.length === 0);
  return { lbs: { ingress }, ...(refused ? { refusedLbs: { ingress: `every entry of ${where} was refused` } } : {}) };
}
