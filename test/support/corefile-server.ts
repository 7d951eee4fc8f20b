/**
 * A loopback DNS server that loads a rendered Corefile and answers as CoreDNS (1.10 up to
 * 1.13, whose source this follows) would for the plugins lbdns's Corefiles use:
 *
 * - server blocks: the most specific zone key takes the query, `.` as the last resort, else
 *   REFUSED; a plugin that returns SERVFAIL/REFUSED/FORMERR/NOTIMP without writing gets an
 *   empty reply with that rcode; the end of the chain is SERVFAIL ("no next plugin found").
 * - plugins run in CoreDNS's plugin.cfg order, not the Corefile's.
 * - `template` (plugin/template/template.go): every template block of a server block is one
 *   handler, tried in Corefile order. A block whose zone, class and type fit but whose regexes
 *   all miss is skipped with `fallthrough`, else SERVFAIL; a block that matches answers
 *   NOERROR with its answers, none giving NODATA. Only `{{ .Name }}` and `{{ index .Match N }}` actions and A/AAAA
 *   answers are emulated; anything else is refused when loading.
 * - `hosts` (plugin/hosts): inline entries only (the hosts file, /etc/hosts by default, is not
 *   read, so no test depends on the machine's), ttl, no_reverse, fallthrough; a known name
 *   without an address of the asked family gets NODATA, an unknown one falls through, or
 *   SERVFAIL without `fallthrough`; PTR from the entries.
 * - `forward` (plugin/forward): FROM zone, `except`, upstreams tried in policy order (each
 *   attempt times out, errors move on to the next, cycling until a deadline, then SERVFAIL);
 *   the upstream's reply relayed as it is, over the client's transport. Upstreams must be
 *   loopback addresses; `upstreamPort` replaces their port so a test server can stand in.
 * - `cache TTL` (plugin/cache): the TTL capping of every reply it passes (all records set to
 *   min(max(smallest TTL, 5), TTL), SERVFAIL replies to 5); replies are not stored.
 * - `loadbalance`: A and AAAA records shuffled as round_robin does; `weighted WEIGHTFILE` moves
 *   an address drawn by the weight file's weights (keyed by the first address's owner) to the top.
 * - `template` answers may also be CNAMEs (a chain before its final addresses, in one answer).
 * - errors, log, health, ready, reload: accepted; they change no answer (no HTTP endpoints here).
 */
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createConnection, isIPv4, isIPv6 } from 'node:net';
import * as packet from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Question } from 'dns-packet';
import { tokenize } from '../../lib/render/corefile-check.js';
import { canonicalIp } from '../../lib/grammar/ip.js';
import { CLASSIC_UDP_LIMIT, frame, HEADER_BYTES, listenUdpAndTcp, OPCODE_MASK, RCODE, unframe } from './dns-wire.js';

export interface CorefileServerOptions {
  /** Where to listen (UDP and TCP, one port); default 127.0.0.1. */
  readonly host?: string;
  /** Replaces the port of every `forward` upstream (53 unless the Corefile says otherwise). */
  readonly upstreamPort?: number;
  /** One attempt at one upstream; default 2000 ms. */
  readonly upstreamTimeoutMs?: number;
  /** How long forward keeps cycling through failing upstreams before SERVFAIL; CoreDNS's is 5 s. */
  readonly forwardDeadlineMs?: number;
}

export interface CorefileServer {
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:PORT` or `[::1]:PORT`, the form `Resolver.setServers` takes. */
  readonly address: string;
  close(): Promise<void>;
}

/** dnsutil.MinimalDefaultTTL and MaximumDefaulTTL. */
const MIN_TTL = 5;
const MAX_TTL = 3600;
/** The order of plugin.cfg for the plugins emulated here: the chain runs in this order. */
const PLUGIN_ORDER = ['reload', 'ready', 'health', 'errors', 'log', 'loadbalance', 'cache', 'template', 'hosts', 'forward'] as const;
type PluginName = (typeof PLUGIN_ORDER)[number];
const NO_EFFECT: ReadonlySet<string> = new Set(['reload', 'ready', 'health', 'errors', 'log']);
const GO_NAME_ACTION = /\{\{\s*\.Name\s*\}\}/g;
/** `{{ index .Match N }}`: submatch N of the regex that matched (Go's template fails past the last). */
const GO_MATCH_ACTION = /\{\{\s*index\s+\.Match\s+([0-9]+)\s*\}\}/g;

interface Request {
  readonly id: number;
  readonly flags: number;
  readonly question: Question;
  /** Lower case, with the trailing dot, as request.Name() gives it. */
  readonly name: string;
  readonly type: string;
  readonly opt: OptAnswer | undefined;
  readonly raw: Buffer;
  readonly proto: 'udp' | 'tcp';
}

interface Reply {
  readonly rcode: number;
  readonly flags: number;
  readonly answers: Answer[];
  readonly authorities: Answer[];
  readonly additionals: Answer[];
}

/** A plugin either wrote a reply, or returned an rcode without writing one. */
type Outcome = { readonly reply: Reply } | { readonly rcode: number };
type Handler = (req: Request, next: () => Promise<Outcome>) => Promise<Outcome>;

interface Directive {
  readonly name: string;
  readonly args: readonly string[];
  readonly block: readonly (readonly string[])[];
  readonly line: number;
}

interface ServerBlock {
  readonly zones: readonly string[];
  readonly chain: readonly Handler[];
}

function fail(line: number, msg: string): never {
  throw new Error(`corefile-server: line ${line}: ${msg}`);
}

const fqdn = (name: string): string => {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
};

function isSubdomain(zone: string, name: string): boolean {
  return zone === '.' || name === zone || name.endsWith(`.${zone}`);
}

/** plugin.Zones.Matches: the longest zone the name is in, or null. */
function matchZone(zones: readonly string[], name: string): string | null {
  let best: string | null = null;
  for (const z of zones) if (isSubdomain(z, name) && (best === null || z.length > best.length)) best = z;
  return best;
}

function normalizeZone(key: string): string {
  const bare = key.replace(/^dns:\/\//, '').replace(/:[0-9]+$/, '');
  return bare === '.' ? '.' : fqdn(bare);
}

/** fall.F: `fallthrough` alone covers every name, with zones only names in them; no `fallthrough` none. */
function parseFall(args: readonly string[]): string[] {
  return args.length === 0 ? ['.'] : args.map(normalizeZone);
}

const fallsThrough = (fall: readonly string[], name: string): boolean => matchZone(fall, name) !== null;

/** Caddyfile structure: server blocks of directives, each with its own line's arguments and an optional block of lines. */
function parseCorefile(text: string): { keys: string[]; directives: Directive[] }[] {
  const tokens = tokenize(text);
  const blocks: { keys: string[]; directives: Directive[] }[] = [];
  let i = 0;
  const at = (k: number) => tokens[k];
  while (i < tokens.length) {
    const keys: string[] = [];
    const startLine = at(i)?.line ?? 0;
    while (i < tokens.length && at(i)?.text !== '{') keys.push(at(i++)?.text ?? '');
    if (i >= tokens.length) fail(startLine, 'server block without "{"');
    i++;
    const directives: Directive[] = [];
    for (;;) {
      const t = at(i);
      if (t === undefined) fail(startLine, 'server block is never closed');
      i++;
      if (t.text === '}') break;
      const args: string[] = [];
      while (at(i) !== undefined && at(i)?.line === t.line && at(i)?.text !== '{' && at(i)?.text !== '}') args.push(at(i++)?.text ?? '');
      const block: string[][] = [];
      if (at(i)?.text === '{' && at(i)?.line === t.line) {
        i++;
        for (;;) {
          const u = at(i);
          if (u === undefined) fail(t.line, `block of ${t.text} is never closed`);
          if (u.text === '}') {
            i++;
            break;
          }
          if (u.text === '{') fail(u.line, 'nested blocks are not emulated');
          const words: string[] = [];
          while (at(i) !== undefined && at(i)?.line === u.line && at(i)?.text !== '}' && at(i)?.text !== '{') words.push(at(i++)?.text ?? '');
          block.push(words);
        }
      }
      directives.push({ name: t.text, args, block, line: t.line });
    }
    blocks.push({ keys, directives });
  }
  return blocks;
}

const emptyReply = (rcode: number, flags = 0): Reply => ({ rcode, flags, answers: [], authorities: [], additionals: [] });

/* ---------------------------------------------------------------- template */

interface TemplateRule {
  readonly zones: readonly string[];
  readonly qclass: string;
  readonly qtype: string;
  readonly regexes: readonly RegExp[];
  readonly answers: readonly string[];
  readonly fall: readonly string[];
}

const CLASSES = new Set(['IN', 'CS', 'CH', 'HS', 'NONE', 'ANY']);

/** dns.NewRR for the shapes the emulation supports: "NAME TTL CLASS TYPE DATA" of A, AAAA or CNAME (an absolute target). */
function parseAddressRr(text: string, line: number): Answer {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5) fail(line, `answer "${text}" is not "NAME TTL CLASS TYPE DATA"`);
  const [name, ttl, cls, type, data] = fields as [string, string, string, string, string];
  const rrType = type.toUpperCase();
  if (cls.toUpperCase() !== 'IN' || !/^[0-9]+$/.test(ttl)) fail(line, `answer "${text}" is not emulated`);
  if (rrType === 'CNAME' && /^[a-z0-9_.-]+\.$/i.test(data)) return { type: 'CNAME', name: fqdn(name), ttl: Number(ttl), class: 'IN', data: data.slice(0, -1) };
  if (rrType === 'A' && isIPv4(data)) return { type: 'A', name: fqdn(name), ttl: Number(ttl), class: 'IN', data };
  if (rrType === 'AAAA' && isIPv6(data)) return { type: 'AAAA', name: fqdn(name), ttl: Number(ttl), class: 'IN', data };
  return fail(line, `answer "${text}" is not an A, AAAA or CNAME record the emulation supports`);
}

function parseTemplate(d: Directive, blockZones: readonly string[]): TemplateRule {
  const [qclass, qtype, ...zoneArgs] = d.args;
  if (qclass === undefined || !CLASSES.has(qclass)) fail(d.line, `template: invalid query class ${qclass}`);
  if (qtype === undefined || !/^[A-Z0-9]+$/.test(qtype)) fail(d.line, `template: invalid RR type ${qtype}`);
  const regexes: RegExp[] = [];
  const answers: string[] = [];
  let fall: string[] = [];
  for (const [key, ...rest] of d.block) {
    if (key === 'match') {
      if (rest.length === 0) fail(d.line, 'template: match without a regex');
      regexes.push(...rest.map((r) => new RegExp(r)));
    } else if (key === 'answer') {
      for (const a of rest) {
        if (a.replace(GO_NAME_ACTION, '').replace(GO_MATCH_ACTION, '').includes('{{')) fail(d.line, `template: answer "${a}" uses a Go template action other than {{ .Name }} and {{ index .Match N }}`);
        parseAddressRr(a.replace(GO_NAME_ACTION, 'probe.example.').replace(GO_MATCH_ACTION, 'probe.example.'), d.line);
      }
      answers.push(...rest);
    } else if (key === 'fallthrough') {
      fall = parseFall(rest);
    } else {
      fail(d.line, `template: "${key}" is not emulated`);
    }
  }
  return {
    zones: zoneArgs.length > 0 ? zoneArgs.map(normalizeZone) : blockZones,
    qclass,
    qtype,
    regexes: regexes.length > 0 ? regexes : [/.*/],
    answers,
    fall,
  };
}

function templateHandler(rules: readonly TemplateRule[]): Handler {
  const zones = rules.flatMap((r) => r.zones);
  return async (req, next) => {
    if (matchZone(zones, req.name) === null) return next();
    for (const rule of rules) {
      const qclass = req.question.class ?? 'IN';
      if (matchZone(rule.zones, req.name) === null) continue;
      if (rule.qclass !== 'ANY' && qclass !== 'ANY' && qclass !== rule.qclass) continue;
      if (rule.qtype !== 'ANY' && req.type !== 'ANY' && req.type !== rule.qtype) continue;
      const matched = rule.regexes.map((r) => r.exec(req.name)).find((m) => m !== null);
      if (matched === undefined) {
        if (fallsThrough(rule.fall, req.name)) continue;
        return { rcode: RCODE.SERVFAIL };
      }
      let failed = false;
      const texts = rule.answers.map((a) =>
        a.replace(GO_NAME_ACTION, req.name).replace(GO_MATCH_ACTION, (_, index: string) => {
          const group = matched[Number(index)];
          if (group === undefined) failed = true;
          return group ?? '';
        }),
      );
      if (failed) return { rcode: RCODE.SERVFAIL };
      const answers = texts.map((t) => parseAddressRr(t, 0));
      return { reply: { ...emptyReply(RCODE.NOERROR, packet.AUTHORITATIVE_ANSWER), answers } };
    }
    return next();
  };
}

/* ---------------------------------------------------------------- hosts */

interface HostsTable {
  readonly v4: Map<string, string[]>;
  readonly v6: Map<string, string[]>;
  readonly byAddress: Map<string, string[]>;
}

/** Hostsfile.parse: `#` comments, lines of fewer than two fields and unparsable addresses skipped, names outside the origins ignored. */
function parseHostsLines(lines: readonly string[], origins: readonly string[], autoReverse: boolean): HostsTable {
  const table: HostsTable = { v4: new Map(), v6: new Map(), byAddress: new Map() };
  for (const raw of lines) {
    const fields = raw.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
    if (fields.length < 2) continue;
    const address = canonicalIp((fields[0] ?? '').split('%')[0] ?? '');
    if (address === null) continue;
    const family = isIPv4(address) ? table.v4 : table.v6;
    for (const n of fields.slice(1)) {
      const name = fqdn(n);
      if (matchZone(origins, name) === null) continue;
      family.set(name, [...(family.get(name) ?? []), address]);
      if (autoReverse) table.byAddress.set(address, [...(table.byAddress.get(address) ?? []), name]);
    }
  }
  return table;
}

/** dnsutil.ExtractAddressFromReverse. */
function addressFromReverse(name: string): string | null {
  const v4 = /^((?:[0-9]+\.){4})in-addr\.arpa\.$/.exec(name);
  if (v4) return canonicalIp((v4[1] ?? '').slice(0, -1).split('.').reverse().join('.'));
  const v6 = /^((?:[0-9a-f]\.){32})ip6\.arpa\.$/.exec(name);
  if (v6) {
    const nibbles = (v6[1] ?? '').split('.').filter(Boolean).reverse().join('');
    return canonicalIp(nibbles.replace(/(.{4})(?!$)/g, '$1:'));
  }
  return null;
}

function hostsHandler(d: Directive, blockZones: readonly string[]): Handler {
  if (d.args.length > 0) {
    // A hosts file given explicitly is read once, at start (CoreDNS re-reads it every 5 s).
    const [path, ...zoneArgs] = d.args as [string, ...string[]];
    return hostsFrom(d, readFileSync(path, 'utf8').split('\n'), zoneArgs.length > 0 ? zoneArgs.map(normalizeZone) : blockZones);
  }
  return hostsFrom(d, [], blockZones);
}

function hostsFrom(d: Directive, fileLines: readonly string[], origins: readonly string[]): Handler {
  let fall: string[] = [];
  let ttl = 3600;
  let autoReverse = true;
  const inline: string[] = [];
  for (const [key = '', ...rest] of d.block) {
    if (key === 'fallthrough') fall = parseFall(rest);
    else if (key === 'no_reverse') autoReverse = false;
    else if (key === 'ttl') {
      const n = Number(rest[0]);
      if (rest.length < 1 || !Number.isInteger(n) || n <= 0 || n > 65535) fail(d.line, 'hosts: ttl provided is invalid');
      ttl = n;
    } else if (key === 'reload') continue;
    else if (fall.length === 0) inline.push([key, ...rest].join(' '));
    else fail(d.line, `hosts: unknown property '${key}'`);
  }
  const table = parseHostsLines([...fileLines, ...inline], origins, autoReverse);
  const record = (type: 'A' | 'AAAA' | 'PTR', name: string, data: string): Answer => ({ type, name, ttl, class: 'IN', data });
  return async (req, next) => {
    const inZone = matchZone(origins, req.name) !== null;
    if (!inZone && req.type !== 'PTR') return next();
    let answers: Answer[] = [];
    if (req.type === 'PTR') {
      const address = addressFromReverse(req.name);
      const names = address === null ? [] : (table.byAddress.get(address) ?? []);
      if (names.length === 0) return next();
      answers = names.map((n) => record('PTR', req.name, n));
    } else if (req.type === 'A') {
      answers = (table.v4.get(req.name) ?? []).map((ip) => record('A', req.name, ip));
    } else if (req.type === 'AAAA') {
      answers = (table.v6.get(req.name) ?? []).map((ip) => record('AAAA', req.name, ip));
    }
    const known = table.v4.has(req.name) || table.v6.has(req.name);
    if (answers.length === 0 && !known) {
      if (fallsThrough(fall, req.name)) return next();
      return { rcode: RCODE.SERVFAIL };
    }
    return { reply: { ...emptyReply(RCODE.NOERROR, packet.AUTHORITATIVE_ANSWER), answers } };
  };
}

/* ---------------------------------------------------------------- forward */

interface Upstream {
  readonly host: string;
  readonly port: number;
}

function parseUpstream(text: string, line: number, portOverride: number | undefined): Upstream {
  const bare = text.replace(/^dns:\/\//, '');
  const m = /^\[([^\]]+)\](?::([0-9]+))?$/.exec(bare) ?? /^([^:]+)(?::([0-9]+))?$/.exec(bare) ?? [bare, bare, undefined];
  const host = m[1] ?? '';
  if (!isIPv4(host) && !isIPv6(host)) fail(line, `forward: upstream "${text}" is not emulated (IP addresses only)`);
  const loopback = isIPv4(host) ? host.startsWith('127.') : canonicalIp(host) === '::1';
  if (!loopback) fail(line, `forward: upstream ${host} is not a loopback address; tests talk to loopback only (render with --upstream 127.0.0.1)`);
  return { host, port: portOverride ?? (m[2] === undefined ? 53 : Number(m[2])) };
}

function exchangeUdp(message: Buffer, to: Upstream, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIPv6(to.host) ? 'udp6' : 'udp4');
    const done = (err: Error | null, reply?: Buffer) => {
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve(reply as Buffer);
    };
    const timer = setTimeout(() => done(new Error('timeout')), timeoutMs);
    // A connected socket hears ICMP port unreachable as ECONNREFUSED, as Go's does.
    socket.on('error', (err) => done(err));
    socket.on('message', (reply) => done(null, reply));
    socket.connect(to.port, to.host, () => socket.send(message));
  });
}

function exchangeTcp(message: Buffer, to: Upstream, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: to.host, port: to.port });
    let pending = Buffer.alloc(0);
    const done = (err: Error | null, reply?: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply as Buffer);
    };
    const timer = setTimeout(() => done(new Error('timeout')), timeoutMs);
    socket.on('error', (err) => done(err));
    socket.on('connect', () => socket.write(frame(message)));
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const whole = unframe(pending);
      if (whole !== undefined) done(null, whole.message);
    });
  });
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function forwardHandler(d: Directive, opts: CorefileServerOptions): Handler {
  const [from, ...to] = d.args;
  if (from === undefined || to.length === 0) fail(d.line, 'forward: needs FROM and at least one TO');
  if (to.length > 15) fail(d.line, `forward: more than 15 TOs configured: ${to.length}`);
  const zone = normalizeZone(from);
  const upstreams = to.map((t) => parseUpstream(t, d.line, opts.upstreamPort));
  let policy = 'random';
  let except: string[] = [];
  for (const [key, ...rest] of d.block) {
    if (key === 'policy' && rest.length === 1 && ['random', 'round_robin', 'sequential'].includes(rest[0] ?? '')) policy = rest[0] as string;
    else if (key === 'except') except = rest.map(normalizeZone);
    else fail(d.line, `forward: "${[key, ...rest].join(' ')}" is not emulated`);
  }
  let robin = 0;
  const timeoutMs = opts.upstreamTimeoutMs ?? 2000;
  const deadlineMs = opts.forwardDeadlineMs ?? 5000;
  return async (req, next) => {
    if (!isSubdomain(zone, req.name) || matchZone(except, req.name) !== null) return next();
    const list = policy === 'sequential' ? upstreams : policy === 'round_robin' ? [...upstreams.slice(robin % upstreams.length), ...upstreams.slice(0, robin++ % upstreams.length)] : shuffled(upstreams);
    const deadline = Date.now() + deadlineMs;
    for (let i = 0; Date.now() < deadline; i = (i + 1) % list.length) {
      const upstream = list[i] as Upstream;
      const wait = Math.max(1, Math.min(timeoutMs, deadline - Date.now()));
      let raw: Buffer;
      try {
        raw = await (req.proto === 'tcp' ? exchangeTcp(req.raw, upstream, wait) : exchangeUdp(req.raw, upstream, wait));
      } catch {
        continue;
      }
      let reply: DecodedPacket;
      try {
        reply = packet.decode(raw);
      } catch {
        return { reply: emptyReply(RCODE.FORMERR) };
      }
      const q = reply.questions?.[0];
      if (reply.id !== req.id || q === undefined || fqdn(q.name) !== req.name || q.type !== req.type) return { reply: emptyReply(RCODE.FORMERR) };
      return {
        reply: {
          rcode: (reply.flags ?? 0) & 0xf,
          flags: (reply.flags ?? 0) & (packet.AUTHORITATIVE_ANSWER | packet.RECURSION_AVAILABLE | packet.TRUNCATED_RESPONSE | packet.AUTHENTIC_DATA),
          answers: reply.answers ?? [],
          authorities: reply.authorities ?? [],
          additionals: (reply.additionals ?? []).filter((rr) => rr.type !== 'OPT'),
        },
      };
    }
    return { rcode: RCODE.SERVFAIL };
  };
}

/* ---------------------------------------------------------------- cache, loadbalance */

const withTtl = (rrs: readonly Answer[], ttl: number): Answer[] => rrs.filter((rr) => rr.type !== 'OPT').map((rr) => ({ ...rr, ttl }) as Answer);
const ttlOf = (rr: Answer): number => ('ttl' in rr && typeof rr.ttl === 'number' ? rr.ttl : 0);

function cacheHandler(d: Directive, blockZones: readonly string[]): Handler {
  const first = d.args[0];
  const capped = first !== undefined && /^-?[0-9]+$/.test(first);
  if (capped && Number(first) <= 0) fail(d.line, `cache TTL can not be zero or negative: ${first}`);
  if (d.block.length > 0) fail(d.line, 'cache: a block is not emulated');
  const maxTtl = capped ? Number(first) : MAX_TTL;
  const maxNegativeTtl = capped ? Number(first) : MAX_TTL / 2;
  const zoneArgs = capped ? d.args.slice(1) : d.args;
  const zones = zoneArgs.length > 0 ? zoneArgs.map(normalizeZone) : blockZones;
  return async (req, next) => {
    if (matchZone(zones, req.name) === null) return next();
    const out = await next();
    if (!('reply' in out)) return out;
    const r = out.reply;
    const records = [...r.answers, ...r.authorities, ...r.additionals.filter((rr) => rr.type !== 'OPT')];
    const delegation = r.answers.length === 0 && r.authorities.some((rr) => rr.type === 'NS');
    const kind =
      r.rcode === RCODE.NXDOMAIN ? 'negative'
      : r.rcode === RCODE.SERVFAIL || r.rcode === RCODE.NOTIMP ? 'failure'
      : r.rcode === RCODE.NOERROR && r.answers.length === 0 && !delegation ? 'negative'
      : r.rcode === RCODE.NOERROR && r.answers.length > 0 ? 'positive'
      : 'other';
    const smallest = kind === 'other' || kind === 'failure' || records.length === 0 ? MIN_TTL : Math.min(MAX_TTL, ...records.map(ttlOf));
    const ttl = kind === 'failure' ? MIN_TTL : Math.min(Math.max(smallest, MIN_TTL), kind === 'negative' ? maxNegativeTtl : maxTtl);
    return { reply: { ...r, answers: withTtl(r.answers, ttl), authorities: withTtl(r.authorities, ttl), additionals: withTtl(r.additionals, ttl) } };
  };
}

/**
 * The weight file as CoreDNS's parseWeights reads it: blank and `#` lines skipped, one field a
 * domain (not an IP; a missing final dot added), two fields `IP WEIGHT` with the weight a
 * uint8; anything else, or an address before any domain, fails the whole file.
 */
export function parseWeightFile(text: string): Map<string, { ip: string; weight: number }[]> {
  const domains = new Map<string, { ip: string; weight: number }[]>();
  let current: { ip: string; weight: number }[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    if (fields.length === 1) {
      const name = fields[0] as string;
      if (canonicalIp(name) !== null) throw new Error(`Wrong domain name:"${name}" in weight file (Maybe a missing weight value?)`);
      const key = name.endsWith('.') ? name : `${name}.`;
      current = domains.get(key) ?? [];
      domains.set(key, current);
    } else if (fields.length === 2) {
      const ip = canonicalIp(fields[0] as string);
      if (ip === null) throw new Error(`Wrong IP address:"${fields[0]}" in weight file`);
      if (!/^[0-9]+$/.test(fields[1] as string) || Number(fields[1]) > 255) throw new Error(`Wrong weight value:"${fields[1]}" in weight file`);
      if (current === undefined) throw new Error('Missing domain name in weight file');
      current.push({ ip, weight: Number(fields[1]) });
    } else {
      throw new Error(`Could not parse weight line:"${line}" in weight file`);
    }
  }
  return domains;
}

/**
 * weighted: the file is re-read at each query (CoreDNS: every `reload` interval); the first
 * address record's owner picks the weights, and an address drawn by weight is swapped to the
 * top when present (CNAMEs stay first). A domain whose weights sum to 0 fails, as Go's
 * rand.Intn(0) panics.
 */
function weightedHandler(d: Directive): Handler {
  const file = d.args[1];
  if (file === undefined || d.args.length !== 2) fail(d.line, 'loadbalance: weighted needs exactly one WEIGHTFILE');
  for (const [key] of d.block) if (key !== 'reload') fail(d.line, `loadbalance: "${key}" is not emulated`);
  parseWeightFile(readFileSync(file, 'utf8'));
  return async (_req, next) => {
    const out = await next();
    if (!('reply' in out) || out.reply.rcode !== RCODE.NOERROR) return out;
    const answers = [...out.reply.answers];
    const addresses = answers.map((rr, i) => ({ rr, i })).filter(({ rr }) => rr.type === 'A' || rr.type === 'AAAA');
    const first = addresses[0];
    const weights = first === undefined ? undefined : parseWeightFile(readFileSync(file, 'utf8')).get(fqdn(first.rr.name));
    if (first === undefined || weights === undefined || weights.length === 0) return out;
    const sum = weights.reduce((n, w) => n + w.weight, 0);
    if (sum === 0) throw new Error(`loadbalance weighted: weights of ${first.rr.name} sum to 0 (CoreDNS panics)`);
    let pick = Math.floor(Math.random() * sum);
    const top = [...weights].sort((a, b) => b.weight - a.weight).find((w) => (pick -= w.weight) < 0) as { ip: string };
    const at = addresses.find(({ rr }) => canonicalIp(String((rr as { data: unknown }).data)) === top.ip);
    if (at === undefined) return out;
    [answers[first.i], answers[at.i]] = [answers[at.i] as Answer, answers[first.i] as Answer];
    return { reply: { ...out.reply, answers } };
  };
}

function loadbalanceHandler(d: Directive): Handler {
  if (d.args[0] === 'weighted') return weightedHandler(d);
  if ((d.args[0] ?? 'round_robin') !== 'round_robin' || d.block.length > 0) fail(d.line, 'loadbalance: only round_robin and weighted are emulated');
  const roundRobin = (rrs: readonly Answer[]): Answer[] => {
    const isAddress = (rr: Answer) => rr.type === 'A' || rr.type === 'AAAA';
    return [...rrs.filter((rr) => rr.type === 'CNAME'), ...rrs.filter((rr) => rr.type !== 'CNAME' && !isAddress(rr) && rr.type !== 'MX'), ...shuffled(rrs.filter(isAddress)), ...shuffled(rrs.filter((rr) => rr.type === 'MX'))];
  };
  return async (_req, next) => {
    const out = await next();
    if (!('reply' in out) || out.reply.rcode !== RCODE.NOERROR) return out;
    return { reply: { ...out.reply, answers: roundRobin(out.reply.answers), authorities: roundRobin(out.reply.authorities), additionals: roundRobin(out.reply.additionals) } };
  };
}

/* ---------------------------------------------------------------- server */

function buildServerBlock(keys: readonly string[], directives: readonly Directive[], opts: CorefileServerOptions): ServerBlock {
  const zones = keys.map(normalizeZone);
  const byName = new Map<string, Directive[]>();
  for (const d of directives) {
    if (!(PLUGIN_ORDER as readonly string[]).includes(d.name)) fail(d.line, `plugin "${d.name}" is not emulated`);
    byName.set(d.name, [...(byName.get(d.name) ?? []), d]);
  }
  const chain: Handler[] = [];
  for (const name of PLUGIN_ORDER) {
    const ds = byName.get(name) ?? [];
    if (ds.length === 0 || NO_EFFECT.has(name)) continue;
    if (ds.length > 1 && name !== 'template' && name !== 'forward') fail(ds[1]?.line ?? 0, `${name} can only be used once per server block`);
    const only = ds[0] as Directive;
    const build: Record<Exclude<PluginName, 'reload' | 'ready' | 'health' | 'errors' | 'log'>, () => Handler[]> = {
      loadbalance: () => [loadbalanceHandler(only)],
      cache: () => [cacheHandler(only, zones)],
      template: () => [templateHandler(ds.map((d) => parseTemplate(d, zones)))],
      hosts: () => [hostsHandler(only, zones)],
      forward: () => ds.map((d) => forwardHandler(d, opts)),
    };
    chain.push(...build[name as keyof typeof build]());
  }
  return { zones, chain };
}

async function runChain(chain: readonly Handler[], req: Request, i = 0): Promise<Outcome> {
  const h = chain[i];
  if (h === undefined) return { rcode: RCODE.SERVFAIL };
  return h(req, () => runChain(chain, req, i + 1));
}

/** dnsserver.Server.ServeDNS: the most specific server block, else the root block, else REFUSED. */
function selectBlock(blocks: readonly ServerBlock[], name: string): ServerBlock | undefined {
  let best: { block: ServerBlock; zone: string } | undefined;
  for (const block of blocks) {
    for (const zone of block.zones) {
      if (zone !== '.' && isSubdomain(zone, name) && (best === undefined || zone.length > best.zone.length)) best = { block, zone };
    }
  }
  return best?.block ?? blocks.find((b) => b.zones.includes('.'));
}

function encodeReply(req: Request, reply: Reply): Buffer {
  const flags = reply.flags | (req.flags & (OPCODE_MASK | packet.RECURSION_DESIRED | packet.CHECKING_DISABLED)) | (reply.rcode & 0xf);
  const opt: Answer[] = req.opt ? [{ type: 'OPT', name: '.', udpPayloadSize: req.opt.udpPayloadSize, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [];
  const base = { id: req.id, type: 'response' as const, questions: [req.question] };
  const full = packet.encode({ ...base, flags, answers: reply.answers, authorities: reply.authorities, additionals: [...reply.additionals, ...opt] });
  const limit = req.proto === 'tcp' ? 0xffff : Math.max(CLASSIC_UDP_LIMIT, req.opt?.udpPayloadSize ?? 0);
  if (full.length <= limit) return full;
  // The ScrubWriter's job: too big for this client over UDP, so say so and let it ask over TCP.
  return packet.encode({ ...base, flags: flags | packet.TRUNCATED_RESPONSE, additionals: opt });
}

async function answer(blocks: readonly ServerBlock[], raw: Buffer, proto: 'udp' | 'tcp'): Promise<Buffer | null> {
  if (raw.length < HEADER_BYTES) return null;
  let query: DecodedPacket;
  try {
    query = packet.decode(raw);
  } catch {
    return null;
  }
  if (query.type === 'response') return null;
  const question = query.questions?.[0];
  const opt = query.additionals?.find((rr): rr is OptAnswer => rr.type === 'OPT');
  const base = { id: query.id ?? 0, flags: query.flags ?? 0, opt, raw, proto };
  if (question === undefined) {
    return encodeReply({ ...base, question: { type: 'A', name: '.' }, name: '.', type: 'A' }, emptyReply(RCODE.SERVFAIL));
  }
  const req: Request = { ...base, question, name: fqdn(question.name), type: question.type };
  if ((question.class ?? 'IN') !== 'IN') return encodeReply(req, emptyReply(RCODE.REFUSED));
  const block = selectBlock(blocks, req.name);
  if (block === undefined) return encodeReply(req, emptyReply(RCODE.REFUSED));
  const out = await runChain(block.chain, req);
  if ('reply' in out) return encodeReply(req, out.reply);
  const clientWrites = !([RCODE.SERVFAIL, RCODE.REFUSED, RCODE.FORMERR, RCODE.NOTIMP] as number[]).includes(out.rcode);
  // A plugin that claims to have written a success but did not leaves the client waiting, as in CoreDNS.
  return clientWrites ? null : encodeReply(req, emptyReply(out.rcode));
}

/** Loads `corefile` (throwing on anything it cannot emulate faithfully) and serves it on loopback. */
export async function startCorefileServer(corefile: string, opts: CorefileServerOptions = {}): Promise<CorefileServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isIPv4(host) && !isIPv6(host)) throw new Error(`corefile-server: host ${host} is not an IP address`);
  const blocks = parseCorefile(corefile).map((b) => buildServerBlock(b.keys, b.directives, opts));
  const { port, close } = await listenUdpAndTcp(host, (message, transport) => answer(blocks, message, transport));
  return {
    host,
    port,
    address: isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`,
    close,
  };
}
