/**
 * The real CRDs (test/fixtures/crds, copied unchanged from openshift/api release-4.19 via
 * shared/crds so a clone tests without it) as validators of the test API server, so a write the real
 * kube-apiserver would refuse (or prune, or default) is refused, pruned or defaulted here too.
 */
import { fileURLToPath } from 'node:url';
import { loadCrd, validateObject, type Crd } from './crd-validate.js';
import type { KubeObject, ValidationContext, Validator } from './kube-api-server.js';

export const CRD_DIR = fileURLToPath(new URL('../fixtures/crds/', import.meta.url));

/** The project's own CRD, as shipped: tests validate against the file an admin applies. */
export const HOSTED_NET_SERVICES_CRD = fileURLToPath(new URL('../../manifests/crd-hostednetservices.yaml', import.meta.url));

/** Two versions of one resource: clusters of either exist, so tests run against both. */
export const INFRASTRUCTURE_CRDS = {
  'release-4.19': '0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.crd.yaml',
  /** openshift/api master: adds on-prem `dnsRecordsType` and Azure's `cloudLoadBalancerConfig`. */
  main: '0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.main.crd.yaml',
} as const;

const CRD_FILES = ['0000_10_config-operator_01_dnses.crd.yaml', '0000_50_dns_01_dnsrecords.crd.yaml'] as const;

/**
 * One CRD as a validator. A write over HTTP is validated as the apiserver validates it
 * through that endpoint. A direct store write (test setup) carries spec and status at once,
 * which no single request can: it is validated as a write of the main resource and then a
 * write of `status`, so both halves are checked and defaulted.
 */
export function crdValidator(crd: Crd, version = storageVersion(crd)): Validator {
  return (obj: KubeObject, old: KubeObject | undefined, context: ValidationContext) => {
    if (context.subresource === 'status') {
      const result = validateObject(crd, version, obj, old, { subresource: 'status' });
      return { causes: result.causes, defaulted: result.object as object };
    }
    const main = validateObject(crd, version, obj, old);
    if (!context.direct || main.causes.length > 0 || !crd.versions[version]?.statusSubresource) {
      return { causes: main.causes, defaulted: main.object as object };
    }
    const withStatus = { ...(main.object as KubeObject) };
    if (obj.status === undefined) delete withStatus.status;
    else withStatus.status = obj.status;
    const status = validateObject(crd, version, withStatus, main.object, { subresource: 'status' });
    return { causes: status.causes, defaulted: status.object as object };
  };
}

function storageVersion(crd: Crd): string {
  const version = Object.values(crd.versions).find((v) => v.storage);
  if (!version) throw new Error(`${crd.plural}.${crd.group} has no storage version`);
  return version.name;
}

export interface CrdValidatorOptions {
  /** Which Infrastructure CRD validates; default release-4.19. */
  readonly infrastructure?: keyof typeof INFRASTRUCTURE_CRDS;
  /** More CRD files (absolute paths), e.g. the project's own from manifests/. */
  readonly extra?: readonly string[];
}

/** Validators for the CRDs in the fixtures, keyed as the test API server's `validators` option wants them. */
export function crdValidators(opts: CrdValidatorOptions = {}): Record<string, Validator> {
  const validators: Record<string, Validator> = {};
  const paths = [INFRASTRUCTURE_CRDS[opts.infrastructure ?? 'release-4.19'], ...CRD_FILES].map((file) => `${CRD_DIR}${file}`);
  for (const path of [...paths, ...(opts.extra ?? [])]) {
    const crd = loadCrd(path);
    validators[`${crd.group}/${crd.plural}`] = crdValidator(crd);
  }
  return validators;
}
