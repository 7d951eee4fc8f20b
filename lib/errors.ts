/**
 * Every failure lbdns reports is one of these classes. The CLI maps them to exit
 * codes (docs/commands.md, "Exit codes") and prints `message`, which must tell a cluster
 * admin what is wrong and what to do about it.
 */
export const EXIT = {
  ok: 0,
  runtime: 1,
  config: 2,
  mismatch: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Characters of a value a message shows; a longer one is cut and its length said. */
export const ECHO_LIMIT = 200;

const TOO_BIG = Symbol('too big');

/** JSON of a value with at most a few hundred parts, so a shared-reference bomb cannot expand. */
function boundedJson(value: unknown): string {
  let parts = 0;
  try {
    const json = JSON.stringify(value, (_key, v: unknown) => {
      if (++parts > 256) throw TOO_BIG;
      return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
    });
    return json ?? String(value);
  } catch (err) {
    if (err !== TOO_BIG) return String(value);
    return Array.isArray(value) ? `[a list of ${value.length} items]` : '{an object too large to show}';
  }
}

/**
 * A value as a message shows it: a string quoted, anything else as JSON, with every control
 * and non-ASCII character escaped so nothing reaches a terminal raw, cut to ECHO_LIMIT
 * characters with the full length said. Every message that echoes input uses it.
 */
export function quote(value: unknown): string {
  const isString = typeof value === 'string';
  const text = isString ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : boundedJson(value);
  const cut = text.length > ECHO_LIMIT;
  const part = cut ? text.slice(0, ECHO_LIMIT) : text;
  // JSON has escaped the control characters and quotes of anything not a string already.
  const shown = isString ? `"${escapeText(part)}${cut ? '…' : ''}"` : `${asciiOnly(part)}${cut ? '…' : ''}`;
  return cut ? `${shown} (${text.length} characters)` : shown;
}

const asciiOnly = (text: string): string => text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Control and non-ASCII characters as JSON escapes, quotes and backslashes escaped: one line of printable ASCII. */
function escapeText(text: string): string {
  return asciiOnly(JSON.stringify(text).slice(1, -1));
}

export abstract class LbdnsError extends Error {
  abstract readonly exitCode: ExitCode;
  /** The message without its details. */
  readonly summary: string;
  /** Lines printed below the message, each on its own (a 422's refused fields). */
  readonly details: readonly string[];
  constructor(message: string, options?: { cause?: unknown; details?: readonly string[] }) {
    super(options?.details === undefined ? message : [message, ...options.details.map((d) => `  ${d}`)].join('\n'), options);
    this.name = new.target.name;
    this.summary = message;
    this.details = options?.details ?? [];
  }
}

/** Longest message printed: anything longer was built from input that escaped the echo limit. */
const MESSAGE_LIMIT = 2000;

/**
 * Controls (C0 with the newline, DEL, C1), bidirectional and zero-width formatting, line and
 * paragraph separators: a message is one line, whatever a value in it holds; lbdns's own
 * further lines are an error's `details`.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** A message as printed: nothing a terminal would act on, at most MESSAGE_LIMIT characters. */
export function printable(message: string): string {
  const line = message.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return line.length > MESSAGE_LIMIT ? `${line.slice(0, MESSAGE_LIMIT)}… (message cut at ${MESSAGE_LIMIT} of ${line.length} characters)` : line;
}

/**
 * What the CLI prints for a failure. An LbdnsError says what to do; anything else is a bug in
 * lbdns, printed as its class and message, and its stack only when asked for (LBDNS_LOG_LEVEL=debug).
 */
export function failureMessage(err: unknown, withStack: boolean): string {
  if (err instanceof LbdnsError) return [printable(err.summary), ...err.details.map((d) => `  ${printable(d)}`)].join('\n');
  const e = err instanceof Error ? err : new Error(String(err));
  const text = printable(`internal error (${e.name}: ${e.message}); please report it`);
  return withStack && e.stack ? `${text}\n${e.stack}` : text;
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
    super(`${field}: ${value === undefined ? '' : `${quote(value)} `}${reason}${hint ? `; ${hint}` : ''}`);
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

/**
 * The API server could not be read: no answer, a 5xx or a 429. What `--if-unreachable=keep`
 * keeps the Corefile on disk for; a refusal (401/403) or a missing object is not one.
 */
export function isApiUnreachable(err: unknown): boolean {
  return err instanceof KubeError && !(err instanceof KubeAccessError) && (err.status === undefined || err.status === 429 || err.status >= 500);
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
