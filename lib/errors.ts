/**
 * Every failure lbdns reports is one of these classes. The CLI maps them to exit
 * codes (see README "Exit codes") and prints `message`, which must tell a cluster
 * admin what is wrong and what to do about it.
 */
export const EXIT = {
  ok: 0,
  runtime: 1,
  config: 2,
  mismatch: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export abstract class LbdnsError extends Error {
  abstract readonly exitCode: ExitCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Flags or arguments that cannot be parsed or do not fit together. */
export class UsageError extends LbdnsError {
  readonly exitCode = EXIT.config;
}

/** A value (from a flag, a config file, a template or the cluster) that lbdns refuses. */
export class ValidationError extends LbdnsError {
  readonly exitCode = EXIT.config;
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly reason: string,
    readonly hint?: string,
  ) {
    super(`${field}: ${value === undefined ? '' : `${JSON.stringify(value)} `}${reason}${hint ? `; ${hint}` : ''}`);
  }
}

/** Configuration that is missing or unusable as a whole: config file, kubeconfig, template, resolv.conf. */
export class ConfigError extends LbdnsError {
  readonly exitCode = EXIT.config;
}

export type ResolveFailure = 'NXDOMAIN' | 'NODATA' | 'SERVFAIL' | 'TIMEOUT' | 'REFUSED' | 'OTHER';

/** A hostname could not be turned into addresses. */
export class ResolveError extends LbdnsError {
  readonly exitCode = EXIT.runtime;
  constructor(
    readonly hostname: string,
    readonly reason: ResolveFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot resolve ${hostname}: ${reason} (${detail})`, options);
  }
}

/** The Corefile could not be written; the previous file is still in place. */
export class WriteError extends LbdnsError {
  readonly exitCode = EXIT.runtime;
}

/** The rendered text failed the structural check; nothing was written. */
export class RenderError extends LbdnsError {
  readonly exitCode = EXIT.config;
}

/** A call to the Kubernetes API failed in a way retrying will not fix by itself. */
export class KubeError extends LbdnsError {
  readonly exitCode: ExitCode = EXIT.runtime;
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 401/403 from the API server: the service account lacks a credential or an RBAC rule. */
export class KubeAccessError extends KubeError {
  override readonly exitCode = EXIT.config;
}

/** Required data did not appear within the wait timeout. */
export class MissingDataError extends LbdnsError {
  readonly exitCode = EXIT.runtime;
}

/** check-dns found answers that differ from what the cluster serves. */
export class MismatchError extends LbdnsError {
  readonly exitCode = EXIT.mismatch;
}

export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof LbdnsError ? err.exitCode : EXIT.runtime;
}
