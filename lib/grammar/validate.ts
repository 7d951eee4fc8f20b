import { domainToASCII } from 'node:url';
import { quote, ValidationError } from '../errors.js';
import { parseDurationMs } from './go-duration.js';
import { canonicalIp } from './ip.js';
import { LIMITS, type Endpoint, type ReloadSettings } from '../model.js';

/*
 * Every value that reaches a template passes through here first. The grammars are strict
 * enough (digits, hex, [a-z0-9.-], one leading `*.`) that no value can carry Corefile
 * syntax: braces, quotes, whitespace, newlines, `{{` or `#`.
 */

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function stringOf(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError(field, value, 'is not a string');
  return value;
}

export function validateIp(field: string, value: unknown): string {
  const ip = canonicalIp(stringOf(field, value));
  if (ip === null) {
    throw new ValidationError(
      field,
      value,
      'is not a valid IP address',
      'give a plain IPv4 or IPv6 literal (no leading zeros, port, zone or prefix length)',
    );
  }
  return ip;
}

/** RFC 1123 name, lower-cased, without a trailing dot. `allowWildcard` permits a leading `*.`. */
export function validateDnsName(field: string, value: unknown, opts: { allowWildcard?: boolean; minLabels?: number } = {}): string {
  const raw = stringOf(field, value);
  const fail = (reason: string): never => {
    throw new ValidationError(field, value, reason, 'use a DNS name of letters, digits, hyphens and dots (RFC 1123)');
  };
  // Before lower-casing, which turns some non-ASCII letters into ASCII ones (U+212A KELVIN SIGN → k).
  const foreign = /[^\x00-\x7f]/u.exec(raw)?.[0];
  if (foreign !== undefined) fail(`has the non-ASCII character U+${(foreign.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}; write an internationalised name in its xn-- (Punycode) form`);
  let name = raw.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  const wildcard = opts.allowWildcard === true && name.startsWith('*.');
  const body = wildcard ? name.slice(2) : name;
  if (body.length === 0) fail('is empty');
  if (name.length > 253) fail('is longer than 253 characters');
  const labels = body.split('.');
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) fail(bad === '' ? 'has an empty label' : `has an invalid label ${quote(bad)}`);
  if (/^[0-9]+$/.test(labels.at(-1) ?? '')) fail('ends in an all-numeric label, which is not a host name (a mistyped IP address?)');
  // Node's resolver converts names through IDNA: an invalid xn-- label would be looked up as something else.
  const idn = labels.find((label) => label.startsWith('xn--') && domainToASCII(label) !== label);
  if (idn !== undefined) fail(`has the label ${quote(idn)}, which is not valid Punycode (IDNA), so a resolver would not look it up as written`);
  // A wildcard's `*` is no label of its own here: `*.org` covers a whole top-level domain.
  if (labels.length < (opts.minLabels ?? 1)) fail(`needs at least ${opts.minLabels} labels${wildcard ? ' after the *' : ''}`);
  return name;
}

/** The longest name lbdns derives from the domain: each served name must fit DNS's 253 characters. */
const LONGEST_DERIVED_PREFIX = 'api-int.';

export function validateDomain(field: string, value: unknown): string {
  const domain = validateDnsName(field, value, { minLabels: 2 });
  const longest = `${LONGEST_DERIVED_PREFIX}${domain}`;
  if (longest.length > 253) {
    throw new ValidationError(field, value, `is too long: ${LONGEST_DERIVED_PREFIX}<domain>, which lbdns serves, would be ${longest.length} characters, more than DNS's 253`, `use a domain of at most ${253 - LONGEST_DERIVED_PREFIX.length} characters`);
  }
  return domain;
}

/** Whether a name (a trailing dot allowed) fits DNS's limits: 253 characters, 63 a label. */
export function withinDnsLimits(name: string): boolean {
  return name.replace(/\.$/, '').length <= 253 && name.split('.').every((label) => label.length <= 63);
}

/** Labels of a DNS name, counted in place: it runs for every served name of every render. */
export function labelCount(name: string): number {
  let count = 1;
  for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) count++;
  return count;
}

/** A node's name as served: `<name>.<domain>`, or the name itself when it already ends in the domain. Two spellings with one FQDN are one node. */
export function nodeFqdn(name: string, domain: string): string {
  return name === domain || name.endsWith(`.${domain}`) ? name : `${name}.${domain}`;
}

/**
 * Why a node's FQDN cannot be served, or undefined. CoreDNS answers the api, api-int and
 * *.apps templates before the hosts plugin, so a node with such a name would be hidden and
 * its reverse lookup would say the API's name.
 */
export function nodeNameConflict(fqdn: string, domain: string): string | undefined {
  if (fqdn.length > 253) return `gives the name ${quote(fqdn)}, longer than DNS's 253 characters`;
  if (fqdn === domain) return `is the cluster domain itself, whose apex records (SOA, NS) are the domain's DNS's: the hosts plugin would answer every other type there empty`;
  if (fqdn === `api.${domain}` || fqdn === `api-int.${domain}`) return `is the API name ${fqdn}, which only the API load balancers answer for`;
  if (fqdn.endsWith(`.apps.${domain}`)) return `lies under *.apps.${domain}, which only the ingress load balancer answers for`;
  if (fqdn === `apps.${domain}`) return `is apps.${domain}, the apex of *.apps, which the ingress load balancer's blocks answer`;
  return undefined;
}

/** An IP literal stays an IP; anything that looks like an address but is not valid is refused, not resolved. */
export function parseEndpoint(field: string, value: unknown): Endpoint {
  const text = stringOf(field, value);
  const ip = canonicalIp(text);
  if (ip !== null) return { kind: 'ip', ip };
  if (/^[0-9.]+(\/[0-9]+)?$/.test(text) || text.includes(':') || text.includes('/')) {
    throw new ValidationError(field, value, 'is neither an IP address nor a host name', 'give an IPv4 or IPv6 literal (no leading zeros, port, zone or prefix length) or a host name (no scheme, port or path)');
  }
  return { kind: 'hostname', hostname: validateDnsName(field, value) };
}

function endpointKey(e: Endpoint): string {
  return e.kind === 'ip' ? e.ip : e.hostname;
}

/** Endpoint list from user input: valid, no duplicates, at most 16. */
export function parseEndpoints(field: string, values: readonly unknown[]): Endpoint[] {
  const endpoints = values.map((v) => parseEndpoint(field, v));
  assertUnique(field, endpoints.map(endpointKey));
  assertAtMost(field, endpoints.length, LIMITS.maxIpsPerName);
  return endpoints;
}

export function assertUnique(field: string, values: readonly string[]): void {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) throw new ValidationError(field, v, 'is listed twice', 'list each address or host name once');
    seen.add(v);
  }
}

export function assertAtMost(field: string, count: number, max: number): void {
  if (count > max) {
    throw new ValidationError(field, count, `entries exceed the limit of ${max}`, `a name can carry at most ${max} addresses; remove some`);
  }
}

export function validateIntInRange(field: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new ValidationError(field, value, `is not a whole number from ${min} to ${max}`);
  }
  return n;
}

export function validateTtl(field: string, value: unknown): number {
  return validateIntInRange(field, value, LIMITS.minTtl, LIMITS.maxTtl);
}

export function validateReload(interval: unknown, jitter: unknown): ReloadSettings {
  const intervalSeconds = parseDurationMs('--reload-interval', interval, LIMITS.minReloadInterval * 1000, LIMITS.maxReloadInterval * 1000) / 1000;
  const jitterSeconds = parseDurationMs('--reload-jitter', jitter, LIMITS.minReloadJitter * 1000, LIMITS.maxReloadInterval * 1000) / 1000;
  if (jitterSeconds * 2 > intervalSeconds) {
    throw new ValidationError('--reload-jitter', jitter, `is more than half the interval (${intervalSeconds}s)`, 'CoreDNS would silently use half the interval instead; lower it');
  }
  return { intervalSeconds, jitterSeconds };
}

/**
 * A file path from a flag or the config file. An empty one would reach the file system as the
 * current directory's name ('' → rename fails with ENOENT), a NUL byte cuts it short.
 */
export function validatePath(field: string, value: string): string {
  if (value === '') throw new ValidationError(field, value, 'is empty', 'give a file path');
  if (value.includes('\0')) throw new ValidationError(field, value, 'holds a NUL character, which no file path can', 'give a file path');
  return value;
}

/**
 * A geo code as Kuadrant's builder takes one: any code that makes a DNS label (it becomes
 * `<geo>.klb.<host>`), kept as written (`GEO-EU`, `IE`, `CAD`, `Eu-West`); `*` is the default geo.
 */
export function validateGeoCode(field: string, value: unknown): string {
  const code = stringOf(field, value);
  if (code === '*' || /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(code)) return code;
  throw new ValidationError(field, value, 'is not a geo code', 'a geo code becomes a DNS label: letters, digits and inner hyphens, at most 63 (GEO-EU, IE, eu-west), or * for the default geo');
}

/** A Kuadrant weight: an unsigned integer (providerSpecific values arrive as strings). */
export function validateWeight(field: string, value: unknown): number {
  return validateIntInRange(field, value, 0, 2 ** 31 - 1);
}

/** A path CoreDNS and dnsmasq read as one word, whole: no quotes, braces, whitespace or `#`. */
export function isPlainPath(path: string): boolean {
  return /^[A-Za-z0-9._/-]+$/.test(path);
}
