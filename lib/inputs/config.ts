import { CORE_SCHEMA, load as parseYaml } from 'js-yaml';
import { ConfigError, ValidationError } from '../errors.js';
import { validatePath } from '../grammar/validate.js';
import { readInputFile } from './admin-file.js';

/**
 * The inputs as a config file or the flags give them: shape-checked, not yet validated.
 * Flags win over the file field by field (`mergeConfig`).
 */
export interface RawConfig {
  domain?: string;
  role?: string;
  loadBalancers?: { api?: string[]; apiInt?: string[]; ingress?: string[] };
  /** Node name → its IPs. */
  nodes?: Record<string, string[]>;
  /** Explicit upstream resolvers; when absent they come from `resolvConf`. */
  upstreams?: string[];
  resolvConf?: string;
  /** Resolvers lbdns itself asks for LB hostnames ('IP' or 'IP:PORT'); default: the upstreams, else the system's. */
  dnsServers?: string[];
  template?: string;
  out?: string;
  /** `[ADDR]:PORT` of the Corefile's server block. */
  listen?: string;
  /** Ports of CoreDNS's /health and /ready endpoints. */
  healthPort?: number | string;
  readyPort?: number | string;
  ttl?: number | string;
  reload?: { interval?: number | string; jitter?: number | string };
  /** Zones Gateway DNS serves names in (--gateway-zone). */
  gatewayZones?: string[];
  /** This cluster's geo for load-balanced Gateway names (--geo-code). */
  geoCode?: string;
  /** TTLs of the endpoints built for DNSPolicies (--gateway-ttl, --gateway-lb-ttl). */
  gatewayTtl?: number | string;
  gatewayLbTtl?: number | string;
}

type Shape = 'string' | 'path' | 'strings' | 'scalar' | { [key: string]: Shape } | 'nodes';

const SHAPE: Shape = {
  domain: 'string',
  role: 'string',
  loadBalancers: { api: 'strings', apiInt: 'strings', ingress: 'strings' },
  nodes: 'nodes',
  upstreams: 'strings',
  resolvConf: 'path',
  dnsServers: 'strings',
  template: 'path',
  out: 'path',
  listen: 'string',
  healthPort: 'scalar',
  readyPort: 'scalar',
  ttl: 'scalar',
  reload: { interval: 'scalar', jitter: 'scalar' },
  gatewayZones: 'strings',
  geoCode: 'string',
  gatewayTtl: 'scalar',
  gatewayLbTtl: 'scalar',
};

function checkShape(path: string, value: unknown, shape: Shape): void {
  const bad = (what: string): never => {
    throw new ValidationError(path || 'the top level', value, `is not ${what}`, 'fix the config file');
  };
  if (shape === 'string' || shape === 'path') {
    if (typeof value !== 'string') bad('a string');
    if (shape === 'path') validatePath(path, value as string);
  } else if (shape === 'scalar') {
    if (typeof value !== 'string' && typeof value !== 'number') bad('a number or a string');
    // YAML's .nan and .inf are numbers no setting takes; named here by their config key.
    if (typeof value === 'number' && !Number.isFinite(value)) bad('a finite number');
  } else if (shape === 'strings') {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) bad('a list of strings');
  } else if (shape === 'nodes') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('a map of node name to a list of IPs');
    for (const [name, ips] of Object.entries(value as object)) checkShape(`${path}.${name}`, ips, 'strings');
  } else {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('a map');
    for (const [key, child] of Object.entries(value as object)) {
      // Own keys only: `constructor` or `toString` must not find what every object inherits.
      const childShape = Object.hasOwn(shape, key) ? shape[key] : undefined;
      const where = path ? `${path}.${key}` : key;
      if (childShape === undefined) {
        throw new ValidationError(where, child, 'is not a known setting', `known settings here: ${Object.keys(shape).join(', ')}`);
      }
      checkShape(where, child, childShape);
    }
  }
}

/**
 * Where a parsed document uses one node twice — what a YAML alias makes, and a tree parsed
 * from text without aliases never has — or undefined. Visits each node once: bounded by the
 * file's size, not by what the aliases would expand to.
 */
function sharedNode(doc: unknown): string | undefined {
  const seen = new Set<object>();
  const visit = (value: unknown, where: string): string | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    if (seen.has(value)) return where;
    seen.add(value);
    for (const [key, child] of Object.entries(value)) {
      const found = visit(child, Array.isArray(value) ? `${where}[${key}]` : where ? `${where}.${key}` : key);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(doc, '');
}

/** Parses a YAML or JSON config file (JSON is YAML) and checks its shape. */
function parseConfig(text: string, source: string): RawConfig {
  let doc: unknown;
  try {
    // The YAML 1.2 core schema: a date stays a string, and a tag it does not define (!!binary,
    // !!timestamp, a local !tag) is an error rather than a guess.
    doc = parseYaml(text, { schema: CORE_SCHEMA });
  } catch (err) {
    // The first line (reason, line:column): js-yaml appends a copy of the file's lines.
    throw new ConfigError(`${source}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  const shared = sharedNode(doc);
  if (shared !== undefined) {
    throw new ConfigError(`${source}: ${shared} is a YAML alias (*name) of an anchor (&name); lbdns does not expand aliases in a config file, as a few nested ones expand to gigabytes: write the value out`);
  }
  try {
    checkShape('', doc, SHAPE);
  } catch (err) {
    if (err instanceof ValidationError) throw new ConfigError(`${source}: ${err.message}`);
    throw err;
  }
  return doc as RawConfig;
}

export async function loadConfigFile(path: string): Promise<RawConfig> {
  return parseConfig(await readInputFile(path, { flag: '--config' }), path);
}

/** Field by field, `over` wins where it says something. */
export function mergeConfig(base: RawConfig, over: RawConfig): RawConfig {
  const defined = <T extends object>(o: T | undefined): Partial<T> =>
    Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
  return {
    ...base,
    ...defined(over),
    loadBalancers: { ...base.loadBalancers, ...defined(over.loadBalancers) },
    reload: { ...base.reload, ...defined(over.reload) },
  };
}

/** `--node NAME=IP`, repeatable; a name given twice collects both addresses (dual stack). */
export function parseNodeFlags(values: readonly string[]): Record<string, string[]> {
  const nodes: Record<string, string[]> = Object.create(null);
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new ValidationError('--node', value, 'is not NAME=IP', 'e.g. --node master-0=10.0.0.5');
    const name = value.slice(0, eq);
    (nodes[name] ??= []).push(value.slice(eq + 1));
  }
  return nodes;
}
