/*
 * The one grammar for an address with an optional port, as Go's net.SplitHostPort and the
 * admins' tools write it: `IP`, `IP:PORT`, `[IPv6]:PORT`, `HOST`, `HOST:PORT`, and `:PORT`
 * where a listener may take every address. --dns-server, --nsupdate-server, check-dns
 * --server, --metrics-addr and the Corefile check's forward upstreams all read it here.
 */
import { ValidationError } from '../errors.js';
import { DEFAULTS, type ListenSettings } from '../model.js';
import { canonicalIp } from './ip.js';
import { validateDnsName } from './validate.js';

export interface HostPort {
  /** A canonical IP, a lower-case host name, or '' for `:PORT`. */
  readonly host: string;
  readonly isIp: boolean;
  readonly port: number | undefined;
}

export interface HostPortRules {
  /** A host name may stand where an IP does. */
  readonly names?: boolean;
  /** `:PORT` (no host) is accepted. */
  readonly emptyHost?: boolean;
  /** The port must be given. */
  readonly portRequired?: boolean;
  /** The lowest port accepted: 1, or 0 for a listener that takes any free port. */
  readonly minPort?: number;
}

export const DNS_PORT = 53;

/** A port from 1 to 65535 written as digits, as a flag or a config file gives it. */
export function validatePort(field: string, value: unknown): number {
  const text = typeof value === 'number' ? String(value) : value;
  const port = typeof text === 'string' ? parsePort(text, 1) : null;
  if (port === null || port === undefined) throw new ValidationError(field, value, 'is not a port from 1 to 65535');
  return port;
}

function parsePort(text: string | undefined, minPort: number): number | undefined | null {
  if (text === undefined) return undefined;
  // No leading zero, as for IPv4 octets: 05353 is not a way of writing 5353.
  if (!/^(?:0|[1-9][0-9]{0,4})$/.test(text)) return null;
  const port = Number(text);
  return port >= minPort && port <= 65535 ? port : null;
}

/** The parts of one address, or null when it is none of the forms the rules allow. */
export function parseHostPort(text: string, rules: HostPortRules = {}): HostPort | null {
  let hostText: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
  if (bracketed) {
    hostText = bracketed[1] ?? '';
    portText = bracketed[2];
    // Go's SplitHostPort refuses `[IPv6]` without a port, and so do CoreDNS and nsupdate.
    if (portText === undefined || canonicalIp(hostText) === null) return null;
  } else if (canonicalIp(text) !== null) {
    hostText = text;
  } else {
    const parts = text.split(':');
    if (parts.length > 2) return null;
    hostText = parts[0] ?? '';
    portText = parts[1];
  }
  const port = parsePort(portText, rules.minPort ?? 1);
  if (port === null || (port === undefined && rules.portRequired === true)) return null;
  if (hostText === '') return rules.emptyHost === true && port !== undefined ? { host: '', isIp: false, port } : null;
  const ip = canonicalIp(hostText);
  if (ip !== null) return { host: ip, isIp: true, port };
  if (rules.names !== true) return null;
  try {
    return { host: validateDnsName('host', hostText), isIp: false, port };
  } catch {
    return null;
  }
}

/** `IP:PORT` or `[IPv6]:PORT`: the form Node's Resolver.setServers and nsupdate's `server` take. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A DNS server given as IP[:PORT] or [IPv6]:PORT, port 53 when none is given; null when it is not one. */
export function dnsServerAddress(text: string): string | null {
  const address = parseHostPort(text);
  return address === null ? null : joinHostPort(address.host, address.port ?? DNS_PORT);
}

/** Parses one `--dns-server` value into the form `Resolver.setServers` takes. */
export function parseDnsServer(value: string): string {
  const address = dnsServerAddress(value);
  if (address === null) {
    throw new ValidationError('--dns-server', value, 'is not a DNS server address', 'use IP, IP:PORT or [IPv6]:PORT with a port from 1 to 65535, e.g. 10.0.0.10, 10.0.0.10:53 or [fd00::10]:53');
  }
  return address;
}

/**
 * `--listen [ADDR]:PORT`: where the Corefile's server block answers. ADDR, when given, is an IP
 * (the `bind` plugin takes no name); the health and ready ports are taken.
 */
export function validateListen(field: string, value: unknown, taken: { readonly health: number; readonly ready: number } = { health: DEFAULTS.healthPort, ready: DEFAULTS.readyPort }): ListenSettings {
  if (typeof value !== 'string') throw new ValidationError(field, value, 'is not a string');
  const text = value;
  const address = parseHostPort(text, { emptyHost: true, portRequired: true });
  if (address === null || address.port === undefined) {
    throw new ValidationError(field, value, 'is not [ADDR]:PORT', 'e.g. :53 (every address), :5353, 127.0.0.1:5353 or [::1]:5353');
  }
  for (const [what, port] of [['health', taken.health], ['ready', taken.ready]] as const) {
    if (address.port === port) throw new ValidationError(field, value, `uses port ${port}, which CoreDNS's ${what} endpoint listens on`, 'choose another port');
  }
  return address.host === '' ? { port: address.port } : { address: address.host, port: address.port };
}
