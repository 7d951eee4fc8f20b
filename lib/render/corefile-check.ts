import { quote, RenderError } from '../errors.js';
import { parseGoDuration } from '../grammar/go-duration.js';
import { parseHostPort } from '../grammar/host-port.js';
import { canonicalIp, ipFamily } from '../grammar/ip.js';
import { isPlainPath, withinDnsLimits } from '../grammar/validate.js';
import { LIMITS } from '../model.js';
import { re2Parse } from './re2-syntax.js';

/*
 * CoreDNS ignores a Corefile that does not parse, but one that parses and then fails at
 * query time (a bad `answer` RR makes every matching query SERVFAIL) or at plugin setup
 * becomes the live config at the next restart. So the rendered text is checked here,
 * with CoreDNS's own lexing rules, before it may be written. Hand-written: no npm package
 * lexes a Corefile as CoreDNS does or knows its plugins' arguments.
 */

interface Token {
  readonly text: string;
  readonly line: number;
  readonly quoted: boolean;
}

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const HASH = 0x23;
const BACKSLASH = 0x5c;

/** Whitespace as `/\s/` defines it, without a regex call for the ASCII a Corefile is made of. */
function isSpace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return /\s/.test(String.fromCharCode(code));
}

/**
 * Caddyfile lexing as CoreDNS does it: whitespace-separated words; "quoted" words in which
 * only \" is an escape (a backslash before anything else stays); `#` outside quotes starts a
 * comment even in the middle of a word. Words are sliced out of the text rather than built a
 * character at a time, and read a line at a time: the check of a 0.8 MB Corefile then holds
 * the tokens of one directive, not of the file, and they die young instead of being copied
 * by every young-generation collection until the check ends.
 */
class Lexer {
  private at = 0;
  private line = 1;
  private ahead: Token | undefined;

  constructor(private readonly text: string) {}

  /** The tokens of the next line that has any, or undefined at the end. */
  nextLine(): Token[] | undefined {
    const first = this.ahead ?? this.next();
    this.ahead = undefined;
    if (first === undefined) return undefined;
    const tokens = [first];
    for (let t = this.next(); t !== undefined; t = this.next()) {
      // A quoted word spanning lines belongs to the line it starts on.
      if (t.line !== first.line) {
        this.ahead = t;
        break;
      }
      tokens.push(t);
    }
    return tokens;
  }

  next(): Token | undefined {
    const { text } = this;
    const n = text.length;
    let i = this.at;
    let token: Token | undefined;
    while (i < n && token === undefined) {
      const c = text.charCodeAt(i);
      if (c === NEWLINE) {
        this.line++;
        i++;
      } else if (isSpace(c)) {
        i++;
      } else if (c === HASH) {
        while (i < n && text.charCodeAt(i) !== NEWLINE) i++;
      } else if (c === QUOTE) {
        const start = this.line;
        let word = '';
        let from = ++i;
        while (i < n && text.charCodeAt(i) !== QUOTE) {
          const ch = text.charCodeAt(i);
          if (ch === BACKSLASH && i + 1 < n) {
            const next = text.charCodeAt(i + 1);
            if (next === QUOTE) {
              word += `${text.slice(from, i)}"`;
              i += 2;
              from = i;
              continue;
            }
            if (next === NEWLINE) this.line++;
            i += 2;
            continue;
          }
          if (ch === NEWLINE) this.line++;
          i++;
        }
        if (i >= n) throw new RenderError(`Corefile line ${start}: unterminated quoted string`);
        word += text.slice(from, i);
        i++;
        token = { text: word, line: start, quoted: true };
      } else {
        const from = i;
        while (i < n && text.charCodeAt(i) !== HASH && !isSpace(text.charCodeAt(i))) i++;
        token = { text: text.slice(from, i), line: this.line, quoted: false };
      }
    }
    this.at = i;
    return token;
  }
}

/** Every token of `text`, in order. */
export function tokenize(text: string): Token[] {
  const lexer = new Lexer(text);
  const tokens: Token[] = [];
  for (let t = lexer.next(); t !== undefined; t = lexer.next()) tokens.push(t);
  return tokens;
}

interface Directive {
  readonly name: string;
  readonly args: readonly Token[];
  readonly line: number;
  /** Lines of the directive's block, each a list of tokens; null without a block. */
  readonly block: Token[][] | null;
}

interface ServerBlockHead {
  readonly keys: readonly string[];
  readonly line: number;
}

// CoreDNS's parser compares token text only: a quoted "{" or "}" opens or closes a block too.
const isOpen = (t: Token | undefined): boolean => t !== undefined && t.text === '{';
const isClose = (t: Token | undefined): boolean => t !== undefined && t.text === '}';
const isBrace = (t: Token): boolean => isOpen(t) || isClose(t);

/** The server blocks of `text` and their directives, each handed on as soon as it is read. */
function readServerBlocks(text: string, visit: { block?(head: ServerBlockHead): void; directive(head: ServerBlockHead, d: Directive): void }): void {
  const lexer = new Lexer(text);
  const fail = (line: number | undefined, msg: string): never => {
    throw new RenderError(`Corefile line ${line ?? '?'}: ${msg}`);
  };
  let blocks = 0;
  for (let head = lexer.nextLine(); head !== undefined; head = lexer.nextLine()) {
    if (!isOpen(head.at(-1))) fail(head[0]?.line, `expected a server block "KEY {", found ${quote(head.map((t) => t.text).join(' '))}`);
    const server: ServerBlockHead = { keys: head.slice(0, -1).map((t) => t.text), line: head[0]?.line ?? 0 };
    if (server.keys.length === 0) fail(head[0]?.line, 'server block without a zone');
    blocks++;
    visit.block?.(server);
    for (;;) {
      const l = lexer.nextLine();
      if (l === undefined) fail(head[0]?.line, 'server block is never closed');
      const first = (l as Token[])[0] as Token;
      if (isClose(first)) {
        if (l!.length > 1) fail(first.line, 'unexpected text after "}"');
        break;
      }
      if (isOpen(first) || first.quoted) fail(first.line, `expected a directive, found ${quote(first.text)}`);
      const hasBlock = isOpen(l!.at(-1));
      const args = l!.slice(1, hasBlock ? -1 : undefined);
      if (args.some(isBrace)) fail(first.line, 'unexpected brace');
      let block: Token[][] | null = null;
      if (hasBlock) {
        block = [];
        for (;;) {
          const inner = lexer.nextLine();
          if (inner === undefined) fail(first.line, `block of ${quote(first.text)} is never closed`);
          if (isClose(inner![0])) {
            if (inner!.length > 1) fail(inner![0]!.line, 'unexpected text after "}"');
            break;
          }
          if (inner!.some(isBrace)) fail(inner![0]!.line, 'nested blocks are not expected here');
          block.push(inner!);
        }
      }
      visit.directive(server, { name: first.text, args, line: first.line, block });
    }
  }
  if (blocks === 0) throw new RenderError('Corefile has no server block');
}

const RR_TYPES = new Set(['A', 'AAAA', 'ANY', 'CNAME', 'TXT', 'SRV', 'PTR', 'MX', 'NS', 'SOA']);
const CLASSES = new Set(['IN', 'CH', 'HS', 'ANY']);
const NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.?$/i;

/** A name of a record CoreDNS sends: past 253 characters or 63 a label, every query it answers gets SERVFAIL. */
const isRecordName = (name: string): boolean => NAME.test(name) && withinDnsLimits(name);

/** The template actions lbdns writes: the query name, and a capture of the regex that matched it. */
const ACTIONS = /\{\{ (?:\.Name|index \.Match ([1-9][0-9]*)) \}\}/g;

/** Checks one answer RR; returns the highest `.Match` index it uses (0: none). */
function checkAnswer(answer: Token, blockType: 'A' | 'AAAA'): number {
  const fail = (msg: string): never => {
    throw new RenderError(`Corefile line ${answer.line}: answer ${quote(answer.text)} ${msg}`);
  };
  let capture = 0;
  const text = answer.text.replace(ACTIONS, (_, index: string | undefined) => {
    if (index !== undefined) capture = Math.max(capture, Number(index));
    return 'probe.example.';
  });
  if (text.includes('{{') || text.includes('}}')) fail('uses a template action other than {{ .Name }} and {{ index .Match N }}');
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5) fail('is not "NAME TTL CLASS TYPE DATA"');
  const [name, ttl, cls, type, data] = fields as [string, string, string, string, string];
  if (!isRecordName(name) && name !== 'probe.example.') fail(`has an invalid owner name ${quote(name)}`);
  if (!/^[0-9]+$/.test(ttl) || Number(ttl) > 2147483647) fail(`has an invalid TTL ${quote(ttl)}`);
  if (cls.toUpperCase() !== 'IN') fail(`has class ${quote(cls)}, expected IN`);
  if (type.toUpperCase() === 'CNAME') {
    // A chain's CNAMEs precede its final addresses in one answer (see NOTES: templates answer whole chains).
    if (!isRecordName(data) || !data.endsWith('.')) fail(`has CNAME target ${quote(data)}, not an absolute DNS name ending in a dot (of at most 253 characters, 63 a label)`);
    return capture;
  }
  if (type.toUpperCase() !== blockType) fail(`is a ${type} record inside a template for ${blockType}: CoreDNS would SERVFAIL`);
  const ip = canonicalIp(data);
  if (ip === null || ipFamily(ip) !== (blockType === 'A' ? 4 : 6)) fail(`has ${quote(data)}, not an IPv${blockType === 'A' ? 4 : 6} address`);
  return capture;
}

/** An `authority` record: the SOA an empty answer carries, `NAME TTL IN SOA MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM`, nothing a template fills. */
function checkAuthority(rr: Token): void {
  const fields = rr.text.trim().split(/\s+/);
  const [name, ttl, cls, type, mname, rname, ...numbers] = fields;
  const absolute = (n: string | undefined) => n !== undefined && n.endsWith('.') && isRecordName(n.slice(0, -1));
  const ok = fields.length === 11 && absolute(name) && /^[0-9]+$/.test(ttl ?? '') && cls === 'IN' && type === 'SOA' && absolute(mname) && absolute(rname) && numbers.every((x) => /^[0-9]{1,10}$/.test(x) && Number(x) < 2 ** 32);
  if (!ok) throw new RenderError(`Corefile line ${rr.line}: template: authority ${quote(rr.text)} is not "NAME. TTL IN SOA MNAME. RNAME. SERIAL REFRESH RETRY EXPIRE MINIMUM"`);
}

function checkTemplate(d: Directive): void {
  const fail = (msg: string): never => {
    throw new RenderError(`Corefile line ${d.line}: template: ${msg}`);
  };
  // CoreDNS looks class and type up case-sensitively: `in` or `a` fails plugin setup.
  const [cls, type] = d.args.map((t) => t.text);
  if (cls === undefined || !CLASSES.has(cls)) fail(`invalid class ${quote(d.args[0]?.text ?? '')}`);
  if (type === undefined || !RR_TYPES.has(type)) fail(`invalid type ${quote(d.args[1]?.text ?? '')}`);
  for (const zone of d.args.slice(2)) if (!NAME.test(zone.text)) fail(`invalid zone ${quote(zone.text)}`);
  // Without a match line CoreDNS matches `.*`, which captures nothing.
  let captures: number | undefined;
  let used: { index: number; line: number } = { index: 0, line: d.line };
  for (const line of d.block ?? []) {
    const key = line[0] as Token;
    switch (key.text) {
      case 'match':
        if (line.length === 1) fail('match without a regex');
        for (let k = 1; k < line.length; k++) {
          const r = line[k] as Token;
          const parsed = re2Parse(r.text);
          if ('error' in parsed) throw new RenderError(`Corefile line ${r.line}: template: invalid regex ${quote(r.text)} for CoreDNS (Go RE2 syntax): ${parsed.error}`);
          captures = Math.min(captures ?? Infinity, parsed.captures);
        }
        break;
      case 'answer':
        if (line.length === 1) fail('answer without a record');
        if (type !== 'A' && type !== 'AAAA') fail(`answers are only checked for A and AAAA blocks, not ${type}`);
        for (let k = 1; k < line.length; k++) {
          const a = line[k] as Token;
          const index = checkAnswer(a, type as 'A' | 'AAAA');
          if (index > used.index) used = { index, line: a.line };
        }
        break;
      case 'authority':
        if (line.length === 1) fail('authority without a record');
        for (let k = 1; k < line.length; k++) checkAuthority(line[k] as Token);
        break;
      case 'fallthrough':
        break;
      default:
        fail(`unexpected ${quote(key.text)} in a template block`);
    }
  }
  // Go's template fails on an index past the regex's groups, and the query gets SERVFAIL.
  if (used.index > (captures ?? 0)) throw new RenderError(`Corefile line ${used.line}: template: an answer uses {{ index .Match ${used.index} }}, but a match regex of the block has only ${captures ?? 0} capturing group${captures === 1 ? '' : 's'}`);
}

/** CoreDNS's hosts setup refuses a ttl outside this range. */
const HOSTS_MAX_TTL = 65535;

const HOSTS_OPTIONS = new Set(['fallthrough', 'reload', 'no_reverse', 'no_inline']);

/** Runs once per node record: indexes rather than destructuring, which copies every line. */
function checkHosts(d: Directive): void {
  let fallthrough = false;
  for (const line of d.block ?? []) {
    const first = line[0] as Token;
    if (first.text === 'ttl') {
      const ttl = line[1]?.text ?? '';
      if (line.length !== 2 || !/^[0-9]+$/.test(ttl) || Number(ttl) < 1 || Number(ttl) > HOSTS_MAX_TTL) {
        throw new RenderError(`Corefile line ${first.line}: hosts ttl ${quote(ttl)} must be a whole number from 1 to ${HOSTS_MAX_TTL}`);
      }
      continue;
    }
    if (first.text === 'fallthrough') fallthrough = true;
    if (first.text === 'reload' && (line.length !== 2 || parseGoDuration(line[1]?.text ?? '') === null)) {
      throw new RenderError(`Corefile line ${first.line}: hosts reload ${quote(line[1]?.text ?? '')} is not a duration CoreDNS reads; write it as Go does, e.g. 5s or 0 to turn it off`);
    }
    if (HOSTS_OPTIONS.has(first.text)) continue;
    // CoreDNS takes an entry after `fallthrough` for an unknown option and fails setup.
    if (fallthrough) throw new RenderError(`Corefile line ${first.line}: hosts entry ${quote(first.text)} comes after fallthrough; CoreDNS accepts entries only before it`);
    if (canonicalIp(first.text) === null) throw new RenderError(`Corefile line ${first.line}: hosts entry ${quote(first.text)} is not an IP address`);
    if (line.length === 1) throw new RenderError(`Corefile line ${first.line}: hosts entry for ${first.text} has no name`);
    for (let k = 1; k < line.length; k++) {
      const name = line[k] as Token;
      if (name.quoted || !NAME.test(name.text)) throw new RenderError(`Corefile line ${name.line}: hosts entry name ${quote(name.text)} is not a DNS name`);
    }
  }
}

const FORWARD_POLICIES = new Set(['random', 'round_robin', 'sequential']);

/** The forward options whose value CoreDNS parses, and how: a refusal fails its setup, so the whole file. */
const FORWARD_VALUES: Record<string, (value: string) => boolean> = {
  policy: (v) => FORWARD_POLICIES.has(v),
  max_fails: (v) => /^[0-9]+$/.test(v),
  max_concurrent: (v) => /^[0-9]+$/.test(v),
  expire: (v) => parseGoDuration(v) !== null,
  health_check: (v) => parseGoDuration(v) !== null,
};

function checkForward(d: Directive): void {
  const from = d.args[0];
  if (from !== undefined && from.text !== '.' && !(NAME.test(from.text) && withinDnsLimits(from.text))) throw new RenderError(`Corefile line ${d.line}: forward zone ${quote(from.text)} is not a DNS name`);
  for (const line of d.block ?? []) {
    const [option, value] = [line[0] as Token, line[1]];
    const valid = FORWARD_VALUES[option.text];
    if (valid !== undefined && (value === undefined || !valid(value.text))) throw new RenderError(`Corefile line ${option.line}: forward ${option.text} ${quote(value?.text ?? '')} is not a value CoreDNS reads`);
  }
  const upstreams = d.args.slice(1);
  if (upstreams.length === 0) throw new RenderError(`Corefile line ${d.line}: forward has no upstream`);
  if (upstreams.length > LIMITS.maxUpstreams) throw new RenderError(`Corefile line ${d.line}: forward has ${upstreams.length} upstreams, CoreDNS accepts at most ${LIMITS.maxUpstreams}`);
  for (const u of upstreams) {
    if (parseHostPort(u.text.replace(/^(dns|tls):\/\//, '')) === null) throw new RenderError(`Corefile line ${u.line}: forward upstream ${quote(u.text)} is not an IP address`);
  }
}

const NS_PER_SECOND = 1_000_000_000n;

function checkReloadDuration(d: Directive, what: string, arg: Token, minSeconds: number): void {
  const ns = parseGoDuration(arg.text);
  if (ns === null) throw new RenderError(`Corefile line ${d.line}: reload ${what} ${quote(arg.text)} is not a duration CoreDNS reads; write it as Go does, e.g. 30s, 1m30s, 1h or 500ms`);
  if (ns < BigInt(minSeconds) * NS_PER_SECOND) throw new RenderError(`Corefile line ${d.line}: reload ${what} ${quote(arg.text)} must be at least ${minSeconds}s`);
}

/** CoreDNS's reload setup: at most two arguments, each a Go duration, above the minimums. */
function checkReload(d: Directive): void {
  if (d.args.length > 2) throw new RenderError(`Corefile line ${d.line}: reload takes at most 2 arguments (INTERVAL JITTER), found ${d.args.length}`);
  const [interval, jitter] = d.args;
  if (interval) checkReloadDuration(d, 'interval', interval, LIMITS.minReloadInterval);
  if (jitter) checkReloadDuration(d, 'jitter', jitter, LIMITS.minReloadJitter);
}

/** `cache [TTL] [ZONES…]`: a first argument that is a number is the TTL, which CoreDNS refuses at setup unless above 0. */
function checkCache(d: Directive): void {
  const ttl = d.args[0]?.text;
  if (ttl !== undefined && /^[+-]?[0-9]+$/.test(ttl) && Number(ttl) <= 0) throw new RenderError(`Corefile line ${d.line}: cache ${quote(ttl)}: CoreDNS refuses a TTL of 0 or less ("cache TTL can not be zero or negative"); give seconds above 0, or none for its default`);
}

/** `bind` takes addresses; lbdns writes IPs only (an interface name would bind wherever the host's NICs happen to be). */
function checkBind(d: Directive): void {
  if (d.args.length === 0) throw new RenderError(`Corefile line ${d.line}: bind needs an address`);
  for (const a of d.args) if (canonicalIp(a.text) === null) throw new RenderError(`Corefile line ${d.line}: bind ${quote(a.text)} is not an IP address`);
}

/** loadbalance [round_robin | weighted WEIGHTFILE] { reload DURATION }, as CoreDNS 1.10.1's setup parses it. */
function checkLoadbalance(d: Directive): void {
  const fail = (msg: string): never => {
    throw new RenderError(`Corefile line ${d.line}: loadbalance: ${msg}`);
  };
  const [policy, file, ...rest] = d.args.map((t) => t.text);
  if (policy === undefined || policy === 'round_robin') {
    if (file !== undefined || d.block !== null) fail('round_robin takes no argument and no block');
    return;
  }
  if (policy !== 'weighted') fail(`unknown policy "${policy}": use round_robin or weighted WEIGHTFILE`);
  if (file === undefined || rest.length > 0) fail('weighted takes exactly one argument, the weight file');
  if (!isPlainPath(file as string)) fail(`weight file "${file}" is not a plain path`);
  for (const line of d.block ?? []) {
    const [key, value, ...more] = line;
    if (key?.text !== 'reload' || value === undefined || more.length > 0) fail(`unexpected "${line.map((t) => t.text).join(' ')}" in the block: only "reload DURATION"`);
    const interval = parseGoDuration((value as Token).text);
    if (interval === null) fail(`reload "${(value as Token).text}" is not a Go duration`);
    // A negative interval makes CoreDNS panic at start (time.NewTicker): a crash loop.
    if ((interval as bigint) < 0n) fail(`reload "${(value as Token).text}" is negative`);
  }
}

/**
 * file DBFILE [ZONES…] { reload DURATION }, as CoreDNS's file setup parses it. A zone it names
 * must be one of the block's: a query outside them never reaches it. `fallthrough` is refused:
 * the file plugin takes it only from CoreDNS 1.12.2 on (OpenShift's through 4.19 is 1.11.3 and
 * refuses the whole file).
 */
function checkFile(d: Directive, block: ServerBlockHead): void {
  const fail = (msg: string): never => {
    throw new RenderError(`Corefile line ${d.line}: file: ${msg}`);
  };
  const [file, ...zones] = d.args.map((t) => t.text);
  if (file === undefined) fail('needs the zone file');
  if (!isPlainPath(file as string)) fail(`zone file "${file}" is not a plain path`);
  const blockZones = block.keys.map((k) => parseServerKey(k).zone.replace(/\.$/, ''));
  for (const zone of zones) {
    const bare = zone.replace(/\.$/, '');
    if (!NAME.test(bare) || !blockZones.some((b) => b === '' || bare === b || bare.endsWith(`.${b}`))) fail(`zone "${zone}" is not within the server block's zones`);
  }
  for (const line of d.block ?? []) {
    const [key, value, ...more] = line;
    if (key?.text === 'fallthrough') fail('"fallthrough" is unknown to the file plugin before CoreDNS 1.12.2 (OpenShift 4.19 and older), which would refuse the whole file; leave it out');
    if (key?.text !== 'reload' || value === undefined || more.length > 0) fail(`unexpected "${line.map((t) => t.text).join(' ')}" in the block: only "reload DURATION"`);
    const interval = parseGoDuration((value as Token).text);
    if (interval === null) fail(`reload "${(value as Token).text}" is not a Go duration`);
    // A negative interval makes CoreDNS panic at start (time.NewTicker): a crash loop.
    if ((interval as bigint) < 0n) fail(`reload "${(value as Token).text}" is negative`);
  }
}

const CHECKS: Record<string, (d: Directive, block: ServerBlockHead) => void> = {
  file: checkFile,
  loadbalance: checkLoadbalance,
  template: checkTemplate,
  hosts: checkHosts,
  forward: checkForward,
  reload: checkReload,
  bind: checkBind,
  cache: checkCache,
};

/** A server block key as CoreDNS reads `.:5353`: the zone, and the port when one is given. */
function parseServerKey(key: string): { readonly zone: string; readonly port: number | undefined } {
  const m = /^(.*?)(?::([0-9]{1,5}))?$/.exec(key);
  return { zone: m?.[1] ?? '', port: m?.[2] === undefined ? undefined : Number(m[2]) };
}

/** A server block key: a zone, optionally `:PORT` (1–65535). */
function checkKey(key: string, line: number): void {
  const { zone, port } = parseServerKey(key);
  if ((zone !== '.' && !(NAME.test(zone) && withinDnsLimits(zone))) || (port !== undefined && (port < 1 || port > 65535))) {
    throw new RenderError(`Corefile line ${line}: server block key ${quote(key)} is not ZONE or ZONE:PORT`);
  }
}

/**
 * The directives of CoreDNS 1.10.1 (plugin.cfg), the oldest CoreDNS lbdns supports; every later
 * release keeps them all. Caddy's parser refuses any other name, so a misspelt directive makes
 * the whole file fail to load.
 */
const DIRECTIVES = new Set(
  ('metadata geoip cancel tls timeouts reload nsid bufsize root bind debug trace ready health pprof prometheus errors log dnstap local ' +
    'dns64 acl any chaos loadbalance tsig cache rewrite header dnssec autopath minimal template transfer hosts route53 azure clouddns ' +
    'k8s_external kubernetes file auto secondary etcd loop forward grpc erratic whoami on sign view').split(' '),
);

/** Plugins of later releases' plugin.cfg (ocp_dnsnameresolver of OpenShift's build only), which 1.10.1 does not know. */
const LATER_DIRECTIVES = new Set(['multisocket', 'nomad', 'ocp_dnsnameresolver', 'quic']);

/**
 * Directives that may appear once per server block, and what CoreDNS does with a second one.
 * The plugins whose setup returns plugin.ErrOnce refuse it (1.10.1 and later alike); reload
 * and health take it, but reload reads only its first line and health keeps only its last
 * address, so a second one never does what it says.
 */
const ERR_ONCE = 'CoreDNS refuses it at setup ("this plugin can only be used once per Server Block")';
const ONCE: ReadonlyMap<string, string> = new Map([
  ...['cache', 'dnssec', 'errors', 'grpc', 'hosts', 'kubernetes', 'loop', 'nsid', 'pprof', 'prometheus', 'ready', 'tsig', 'view'].map((n): [string, string] => [n, ERR_ONCE]),
  ['reload', 'CoreDNS reads only the first and ignores the rest'],
  ['health', "CoreDNS serves /health only on the last one's address"],
]);

/** Levenshtein distance, to point a misspelt directive at the one meant. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length] as number;
}

function unknownDirective(d: Directive): RenderError {
  if (LATER_DIRECTIVES.has(d.name)) {
    return new RenderError(`Corefile line ${d.line}: directive ${quote(d.name)} is unknown to CoreDNS 1.10.1, the oldest release lbdns supports, which would refuse the whole file; leave it out`);
  }
  const near = [...DIRECTIVES].filter((n) => distance(n, d.name) <= 2).sort((a, b) => distance(a, d.name) - distance(b, d.name));
  const hint = near.length > 0 ? `; did you mean ${quote(near[0])}?` : '; use a plugin name from CoreDNS\'s plugin.cfg';
  return new RenderError(`Corefile line ${d.line}: unknown directive ${quote(d.name)}: CoreDNS would refuse the whole file${hint}`);
}

/** One directive of a server block; `seen`: the line of each directive name met before in that block. */
function checkDirective(block: ServerBlockHead, d: Directive, seen: Map<string, number>): void {
  if (!DIRECTIVES.has(d.name)) throw unknownDirective(d);
  const first = seen.get(d.name);
  const once = ONCE.get(d.name);
  if (first !== undefined && once !== undefined) {
    throw new RenderError(`Corefile line ${d.line}: a second ${quote(d.name)} in the server block ${quote(block.keys.join(' '))} (the first is on line ${first}): ${once}; keep one, holding the settings of both`);
  }
  if (first === undefined) seen.set(d.name, d.line);
  CHECKS[d.name]?.(d, block);
}

/** The A and AAAA addresses one server block's template pair answers, as lbdns writes them. */
export interface TemplateAnswers {
  readonly zone: string;
  readonly matches: readonly string[];
  readonly v4: readonly string[];
  readonly v6: readonly string[];
  /** The TTL of its answers (lbdns writes one per name). */
  readonly ttl: number | undefined;
}

/**
 * Each name's template answers in a Corefile, read with the same parser as the check: the
 * plain `{{ .Name }} TTL IN A|AAAA IP` answers lbdns writes, A and AAAA blocks of one zone and
 * match taken together. What the last good Corefile served, when nothing else can say it.
 */
export function templateAnswers(text: string): TemplateAnswers[] {
  const byKey = new Map<string, { zone: string; matches: string[]; v4: string[]; v6: string[]; ttl: number | undefined }>();
  readServerBlocks(text, {
    directive: (_, d) => {
      const type = d.args[1]?.text;
      // ANY, or IN: a Corefile of an earlier release, still on disk after an upgrade, has IN.
      const cls = d.args[0]?.text;
      if (d.name !== 'template' || (cls !== 'ANY' && cls !== 'IN') || (type !== 'A' && type !== 'AAAA')) return;
      const lines = d.block ?? [];
      const matches = lines.filter((l) => l[0]?.text === 'match').flatMap((l) => l.slice(1).map((t) => t.text));
      const zone = d.args[2]?.text ?? '';
      const key = `${zone} ${matches.join(' ')}`;
      const entry = byKey.get(key) ?? { zone, matches, v4: [], v6: [], ttl: undefined };
      byKey.set(key, entry);
      for (const l of lines) {
        if (l[0]?.text !== 'answer') continue;
        for (const a of l.slice(1)) {
          const found = /^\{\{ \.Name \}\} ([0-9]+) IN (?:A|AAAA) (\S+)$/.exec(a.text);
          const address = canonicalIp(found?.[2] ?? '');
          const list = type === 'A' ? entry.v4 : entry.v6;
          // A custom template may answer a name in more than one server block (two listen addresses).
          if (address === null || list.includes(address)) continue;
          list.push(address);
          entry.ttl = Number(found?.[1]);
        }
      }
    },
  });
  return [...byKey.values()];
}

/** The paths of the zone files a Corefile's `file` plugins serve. */
export function zoneFilesNamed(text: string): string[] {
  const paths: string[] = [];
  readServerBlocks(text, {
    directive: (_, d) => {
      const path = d.args[0]?.text;
      if (d.name === 'file' && path !== undefined) paths.push(path);
    },
  });
  return paths;
}

/**
 * The addresses a Corefile's templates answer for `name` (lower case, no trailing dot): what
 * the last good Corefile says api-int is, when nothing else can be asked. None: [].
 */
export function addressesServedFor(text: string, name: string): string[] {
  const query = `${name}.`;
  const found = templateAnswers(text).filter((t) => t.matches.some((m) => safeRegExp(m)?.test(query)));
  return [...new Set(found.flatMap((t) => [...t.v4, ...t.v6]))];
}

function safeRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(source);
  } catch {
    return undefined;
  }
}

/**
 * Throws RenderError naming the line when the text would not load or would answer wrongly in
 * CoreDNS. A file that does not parse is reported as such before any directive's problem, as
 * CoreDNS parses the whole file before it sets a plugin up.
 */
export function checkCorefile(text: string): void {
  let seen = new Map<string, number>();
  let problem: unknown;
  const checked = (check: () => void): void => {
    if (problem !== undefined) return;
    try {
      check();
    } catch (err) {
      problem = err;
    }
  };
  const servers: { keys: readonly string[]; line: number; binds: string[]; view: boolean }[] = [];
  readServerBlocks(text, {
    block: (head) => {
      checked(() => {
        for (const key of head.keys) checkKey(key, head.line);
      });
      servers.push({ keys: head.keys, line: head.line, binds: [], view: false });
      seen = new Map();
    },
    directive: (head, d) => {
      const server = servers.at(-1);
      if (d.name === 'bind') server?.binds.push(...d.args.map((t) => t.text));
      if (d.name === 'view' && server !== undefined) server.view = true;
      checked(() => checkDirective(head, d, seen));
    },
  });
  if (problem !== undefined) throw problem;
  checkServersDistinct(servers);
}

/** `example.com.:53`, `Example.com` and `example.com:53` are one server to CoreDNS (run without -dns.port, as lbdns runs it). */
function serverKey(key: string): string {
  const { zone: given, port } = parseServerKey(key);
  const zone = given.toLowerCase();
  return `${zone === '.' || zone.endsWith('.') ? zone : `${zone}.`}:${port ?? 53}`;
}

/** CoreDNS refuses the whole file when two server blocks (or one block's keys) serve one zone and port on a shared address. */
function checkServersDistinct(servers: readonly { keys: readonly string[]; line: number; binds: readonly string[]; view: boolean }[]): void {
  const taken = new Map<string, { line: number; binds: readonly string[] }[]>();
  // A block with a view filters its queries: CoreDNS lets it share a zone and port with others.
  for (const server of servers.filter((s) => !s.view)) {
    for (const key of server.keys) {
      const normal = serverKey(key);
      const before = taken.get(normal) ?? [];
      // Without bind a block listens on every address, so it meets any other block of its key.
      const clash = before.find((b) => b.binds.length === 0 || server.binds.length === 0 || b.binds.some((a) => server.binds.includes(a)));
      if (clash !== undefined) throw new RenderError(`Corefile line ${server.line}: server block key ${quote(key)} is served already (line ${clash.line}) on the same port and address: CoreDNS would refuse the whole file`);
      before.push({ line: server.line, binds: server.binds });
      taken.set(normal, before);
    }
  }
}
