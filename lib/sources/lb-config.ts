import type { V1ConfigMap } from '@kubernetes/client-node';
import type { SourceContribution } from './cluster-data.js';
import type { Endpoint, LbName } from '../model.js';
import { describeObject, endpointsFromApi, warnIgnored, type Warn } from './untrusted.js';

/** Which ConfigMap key holds which LB: the installer writes each LB's DNS names or IPs, comma-separated (openshift/installer pkg/asset/lbconfig). */
const LB_CONFIG_KEYS = {
  'internal-api-lb-ips': 'api-int',
  'external-api-lb-ips': 'api',
} as const satisfies Record<string, LbName>;

/** Where the installer leaves its LB config on every cloud platform (its manifest openshift/openshift-lb-config.yaml). */
export const DEFAULT_LB_CONFIG = { namespace: 'openshift-infra', name: 'openshift-lb-config' } as const;

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
  const refusedLbs: Partial<Record<LbName, string>> = {};
  const object = describeObject('configmap', configMap?.metadata);
  for (const [key, lb] of Object.entries(LB_CONFIG_KEYS)) {
    const where = `${object} data.${key}`;
    const value: unknown = configMap?.data?.[key];
    const entries = entriesOf(value, where, warn);
    lbs[lb] = endpointsFromApi(entries, warn);
    if (lbs[lb].length === 0 && (entries.length > 0 || (value !== undefined && typeof value !== 'string'))) refusedLbs[lb] = `every entry of ${where} was refused`;
  }
  return { lbs, ...(Object.keys(refusedLbs).length > 0 ? { refusedLbs } : {}) };
}
