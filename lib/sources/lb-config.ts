import type { V1ConfigMap } from '@kubernetes/client-node';
import type { SourceContribution } from './cluster-data.js';
import type { Endpoint, LbName, Platform } from '../model.js';
import { describeObject, endpointsFromApi, warnIgnored, type Warn } from './untrusted.js';

/** Which ConfigMap key holds which LB. */
const LB_CONFIG_KEYS = {
  'internal-api-lb-dns-name': 'api-int',
  'external-api-lb-dns-name': 'api',
} as const satisfies Record<string, LbName>;

/** Where the installer leaves its LB config when `lbConfigForDNS` names no other ConfigMap. */
export function defaultLbConfigRef(platform: Platform): { namespace: string; name: string } {
  return { namespace: `openshift-${platform.toLowerCase()}-infra`, name: 'lbconfigfordns' };
}

/**
 * Splits on commas and any whitespace, so one address, a comma list and a YAML block of
 * one per line all read the same. The price of that leniency: `a b` is two names, not one
 * bad one (each still has to pass validation on its own).
 */
function entriesOf(value: unknown, where: string, warn: Warn): { item: string; where: string }[] {
  if (value === undefined) return [];
  if (typeof value !== 'string') {
    warnIgnored(warn, where, value, 'is not a string');
    return [];
  }
  return value
    .split(/[\s,]+/)
    .filter((part) => part !== '')
    .map((item, i) => ({ item, where: `${where}[${i}]` }));
}

/**
 * api and api-int from the installer's LB config ConfigMap. A missing key, like a missing
 * ConfigMap, is an explicit "this LB has no endpoints": the list is empty, not absent.
 */
export function lbConfigContribution(configMap: V1ConfigMap | undefined, warn: Warn): SourceContribution {
  const lbs: Partial<Record<LbName, Endpoint[]>> = {};
  const object = describeObject('configmap', configMap?.metadata);
  for (const [key, lb] of Object.entries(LB_CONFIG_KEYS)) {
    const where = `${object} data.${key}`;
    lbs[lb] = endpointsFromApi(entriesOf(configMap?.data?.[key], where, warn), where, warn);
  }
  return { lbs };
}
