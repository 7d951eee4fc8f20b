import { readInputFile } from './admin-file.js';
import { loadConfigFile, mergeConfig, type RawConfig } from './config.js';
import { EXAMPLE_CONFIG } from './example.js';
import type { Logger } from '../runtime/log.js';
import type { ClusterSpec } from '../model.js';
import { localAddresses, parseResolvConf, selectUpstreams } from './resolv-conf.js';
import { checkLocalSettings, listenOf, refuseSelfForward, roleServes, specFromConfig, unusedByRole, validateRole, validateUpstreams } from './spec.js';
import { DEFAULTS } from '../model.js';
import { ValidationError } from '../errors.js';

export interface LocalInputOptions {
  /** Path of a YAML/JSON config file. */
  readonly configFile?: string | undefined;
  /** Start from the built-in example cluster. */
  readonly example?: boolean;
  /** What the flags said; wins over the file field by field. */
  readonly flags: RawConfig;
}

export interface LocalInputs {
  readonly raw: RawConfig;
  readonly spec: ClusterSpec;
}

export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

async function upstreamsOf(raw: RawConfig, log: Logger): Promise<string[]> {
  if (raw.upstreams !== undefined) return validateUpstreams('--upstream', raw.upstreams);
  const path = raw.resolvConf ?? DEFAULT_RESOLV_CONF;
  const text = await readInputFile(path, { flag: '--resolv-conf', hint: "point --resolv-conf at the node's resolv.conf or give --upstream" });
  const { upstreams, dropped } = selectUpstreams(parseResolvConf(text), localAddresses(), path);
  for (const d of dropped) log.warn('upstream resolver dropped', { address: d.address, reason: d.reason, source: path });
  return upstreams;
}

/**
 * Example, then config file, then flags, merged field by field. A setting the role serves
 * nothing from is never dropped without a word: on the command line it can only be a
 * mistake (an error); in a config file shared by several roles it is expected (a warning).
 */
export async function loadRawConfig(opts: LocalInputOptions, log: Logger): Promise<RawConfig> {
  const base = opts.example ? EXAMPLE_CONFIG : {};
  const file = opts.configFile ? await loadConfigFile(opts.configFile) : {};
  const raw = mergeConfig(mergeConfig(base, file), opts.flags);
  const role = validateRole(raw.role ?? 'control-plane');
  const fromFlags = unusedByRole(role, opts.flags);
  if (fromFlags.length > 0) {
    throw new ValidationError(fromFlags.join(', '), undefined, `is not served by role ${role}`, `drop it, or choose the role that serves it: ${role} serves ${roleServes(role)}`);
  }
  checkLocalSettings(raw);
  if (raw.upstreams !== undefined) refuseSelfForward('--upstream', raw.upstreams, listenOf(raw).listen ?? DEFAULTS.listen, localAddresses());
  const fromFile = unusedByRole(role, file);
  if (fromFile.length > 0) log.warn('the config file sets what this role does not serve; ignored', { role, settings: fromFile, source: opts.configFile });
  return raw;
}

/**
 * Validates a merged config into a spec, reading resolv.conf for the upstreams. A command
 * that serves no DNS (`needsUpstreams` false) must not fail on a resolv.conf holding only a
 * loopback resolver, which is usual where such commands run (a laptop with systemd-resolved).
 */
export async function specFromRaw(raw: RawConfig, log: Logger, needsUpstreams = true): Promise<ClusterSpec> {
  return specFromConfig(raw, needsUpstreams ? await upstreamsOf(raw, log) : []);
}

/** Config file, example and flags → a validated spec. Reads files; resolves nothing. */
export async function loadLocalInputs(opts: LocalInputOptions, log: Logger, needsUpstreams = true): Promise<LocalInputs> {
  const raw = await loadRawConfig(opts, log);
  return { raw, spec: await specFromRaw(raw, log, needsUpstreams) };
}

/**
 * Who lbdns asks for LB host names: --dns-server, else the upstreams the Corefile forwards
 * to (already stripped of loopback and of this node, so never the CoreDNS lbdns configures,
 * which an initContainer runs before and which may be the node's resolver), else the
 * system's resolvers.
 */
export function lbResolvers(raw: RawConfig, spec: ClusterSpec): readonly string[] | undefined {
  return raw.dnsServers ?? (spec.upstreams.length > 0 ? spec.upstreams : undefined);
}
