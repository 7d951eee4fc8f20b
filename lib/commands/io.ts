import type { RawConfig } from '../inputs/config.js';
import { DEFAULT_RESOLV_CONF } from '../inputs/local-inputs.js';
import type { Output } from '../sinks/atomic-write.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Level, type Logger } from '../runtime/log.js';
import { ValidationError } from '../errors.js';

export interface Io {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
}

/** What every command takes from its flags. */
export interface CommandInputs {
  readonly configFile?: string | undefined;
  readonly example?: boolean;
  readonly flags: RawConfig;
  readonly io: Io;
}

/**
 * The inputs as a control plane sees them: the admin's DNS records and the Infrastructure
 * status serve every client, so all three LBs count whatever role a shared config names.
 */
export function everyLb<T extends CommandInputs>(opts: T): T {
  return { ...opts, flags: { ...opts.flags, role: 'control-plane' } };
}

/** The files a command reads, which none of its outputs may be: --config, --template, resolv.conf and the kubeconfig. */
export function inputFiles(opts: CommandInputs, raw: RawConfig, cluster: { readonly kubeconfig: string | undefined } | undefined): Output[] {
  // Every file a kubeconfig may come from (the flag, else $KUBECONFIG's files, else ~/.kube/config): more than is read, on the safe side; none without a cluster to read.
  const fromEnv = (process.env.KUBECONFIG ?? '').split(':').filter((p) => p !== '');
  const kubeconfigs = cluster === undefined ? [] : cluster.kubeconfig !== undefined ? [cluster.kubeconfig] : fromEnv.length > 0 ? fromEnv : [join(homedir(), '.kube', 'config')];
  return [
    ...(opts.configFile === undefined ? [] : [{ what: '--config', path: opts.configFile }]),
    ...(raw.template === undefined ? [] : [{ what: '--template', path: raw.template }]),
    ...(raw.upstreams === undefined ? [{ what: '--resolv-conf', path: raw.resolvConf ?? DEFAULT_RESOLV_CONF }] : []),
    ...kubeconfigs.map((path) => ({ what: 'the kubeconfig', path })),
  ];
}

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/** The command's logger at LBDNS_LOG_LEVEL; a value that is no level is refused rather than ignored. */
export function loggerFor(io: Io): Logger {
  const level = process.env.LBDNS_LOG_LEVEL;
  if (level !== undefined && !(LEVELS as readonly string[]).includes(level)) {
    throw new ValidationError('LBDNS_LOG_LEVEL', level, 'is not a log level', `use one of ${LEVELS.join(', ')}, or leave it unset for info`);
  }
  return createLogger(io.stderr, (level as Level | undefined) ?? 'info');
}

/** What a long-running command (watch-lb-status, update-infra-status --watch) takes beside its inputs. */
export interface LongRunningOptions {
  /** `HOST:PORT` for /healthz, /readyz and /metrics. */
  readonly metricsAddr: string;
  /** Ends the command as SIGTERM does; tests use it. */
  readonly signal?: AbortSignal;
  /** Told the bound health address once listening (for `:0`). */
  readonly onListening?: (address: string) => void;
}
