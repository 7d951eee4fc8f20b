import { KubeAccessError, KubeError } from '../errors.js';

function statusOf(err: unknown): number | undefined {
  if (err instanceof KubeError) return err.status;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

function serverMessage(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      return body.slice(0, 300);
    }
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  return (err as Error)?.message ?? String(err);
}

/** An API failure as a typed error; `what` says what lbdns was doing, e.g. `list services in openshift-ingress`. */
export function kubeErrorFrom(err: unknown, what: string): KubeError {
  if (err instanceof KubeError) return err;
  const status = statusOf(err);
  const message = serverMessage(err);
  if (status === 401) return new KubeAccessError(`${what}: unauthorized (${message}); the kubeconfig's credentials are missing or expired`, status, { cause: err });
  if (status === 403) return new KubeAccessError(`${what}: forbidden (${message}); grant it with the RBAC in manifests/ (rbac.yaml for the static pods, rbac-update-infra-status.yaml for update-infra-status)`, status, { cause: err });
  return new KubeError(`${what}: ${status === undefined ? '' : `HTTP ${status}: `}${message}`, status, { cause: err });
}

export function httpStatusOf(err: unknown): number | undefined {
  return statusOf(err);
}
