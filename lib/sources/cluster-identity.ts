import { validateDomain } from '../grammar/validate.js';
import type { Infrastructure } from './infra-lbs.js';
import { describeObject, validated, warnIgnored, type ApiObjectMeta, type Warn } from './untrusted.js';

/** `dnses.config.openshift.io` as far as lbdns reads it; every field may be missing. */
export interface DnsConfig {
  readonly metadata?: ApiObjectMeta;
  readonly spec?: { readonly baseDomain?: unknown };
}

function domainAt(where: string, value: unknown, warn: Warn): string | undefined {
  return validated(where, value, warn, () => validateDomain(where, value), 'not used as the cluster domain');
}

/** `https://api-int.<domain>:6443` → `<domain>`: the installer always names the internal API this way. */
function domainFromInternalUri(infra: Infrastructure, warn: Warn): string | undefined {
  const where = `${describeObject('infrastructure', infra.metadata)} status.apiServerInternalURI`;
  const uri = infra.status?.apiServerInternalURI;
  if (uri === undefined || uri === null || uri === '') return undefined;
  let host: string;
  try {
    host = new URL(String(uri)).hostname;
  } catch {
    warnIgnored(warn, where, uri, 'is not a URL', 'no cluster domain derived from it');
    return undefined;
  }
  if (!host.startsWith('api-int.')) {
    warnIgnored(warn, where, uri, 'has a host that does not start with "api-int."', 'no cluster domain derived from it');
    return undefined;
  }
  return domainAt(where, host.slice('api-int.'.length), warn);
}

/**
 * The cluster domain (`mycluster.example.com`, the parent of api, api-int and apps):
 * `spec.baseDomain` of the cluster DNS config, which is exactly that; else the internal
 * API URI's host without its `api-int.` label. A base domain that fails validation does
 * not stop the URI from being tried: both name the same domain in a working cluster.
 */
export function domainFrom(dns: DnsConfig | undefined, infra: Infrastructure | undefined, warn: Warn): string | undefined {
  const baseDomain = dns?.spec?.baseDomain;
  if (baseDomain !== undefined && baseDomain !== null && baseDomain !== '') {
    const domain = domainAt(`${describeObject('dns', dns?.metadata)} spec.baseDomain`, baseDomain, warn);
    if (domain !== undefined) return domain;
  }
  return infra === undefined ? undefined : domainFromInternalUri(infra, warn);
}
