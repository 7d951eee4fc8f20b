/**
 * An authoritative DNS server on loopback for tests: UDP and TCP on one port, data and
 * failures changeable while it runs, and a count of the queries it received so tests can
 * assert how often a client asked.
 */
import { isIPv4, isIPv6 } from 'node:net';
import * as packet from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Packet } from 'dns-packet';
import { CLASSIC_UDP_LIMIT, HEADER_BYTES, listenUdpAndTcp, OPCODE_MASK, RCODE } from './dns-wire.js';

/** `nxdomain`: the name does not exist, also at the end of a chain that leads to it, as a recursive server answers. */
export type FailureMode = 'servfail' | 'timeout' | 'refused' | 'nxdomain';
export type QueryType = 'A' | 'AAAA' | 'CNAME';

export interface NameData {
  A?: readonly string[];
  AAAA?: readonly string[];
  CNAME?: string;
  /** Seconds; default 60. */
  ttl?: number;
}

export interface DnsTestServer {
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:PORT` or `[::1]:PORT`: the form `--dns-server` takes. */
  readonly address: string;
  /** Replaces everything the server knows about `name` (case-insensitive, trailing dot optional). */
  set(name: string, records: NameData): void;
  /** The name no longer exists: queries for it get NXDOMAIN. */
  remove(name: string): void;
  /**
   * Makes queries for `name` (only those of `type`, if given) fail; `timeout` never answers.
   * null restores normal answers: for that type, or without a type for every type of the name.
   */
  fail(name: string, mode: FailureMode | null, type?: QueryType): void;
  /** Like `fail` for every name; a per-name mode still wins. */
  failAll(mode: FailureMode | null): void;
  /** Queries received (UDP and TCP), optionally only those for one name and/or type. */
  queries(name?: string, type?: QueryType): number;
  resetCounts(): void;
  close(): Promise<void>;
}

const QR = 0x8000;
const EDNS_UDP_LIMIT = 1232;
// Deep enough for any chain a test builds, short enough that a loop ends quickly.
const MAX_CNAME_CHAIN = 8;
const DEFAULT_TTL = 60;

interface StoredName {
  readonly A: readonly string[];
  readonly AAAA: readonly string[];
  readonly CNAME: string | undefined;
  readonly ttl: number;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function validate(name: string, records: NameData): StoredName {
  const A = records.A ?? [];
  const AAAA = records.AAAA ?? [];
  const ttl = records.ttl ?? DEFAULT_TTL;
  if (records.CNAME !== undefined && (A.length > 0 || AAAA.length > 0)) {
    // RFC 1034 §3.6.2: a name with a CNAME has no other data; a real server would refuse the zone.
    throw new Error(`dns-server: ${name} cannot have a CNAME and addresses at once`);
  }
  for (const ip of A) if (!isIPv4(ip)) throw new Error(`dns-server: ${name} A ${ip} is not an IPv4 address`);
  for (const ip of AAAA) if (!isIPv6(ip)) throw new Error(`dns-server: ${name} AAAA ${ip} is not an IPv6 address`);
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 0x7fffffff) throw new Error(`dns-server: ${name} ttl ${ttl} is not a valid TTL`);
  return { A: [...A], AAAA: [...AAAA], CNAME: records.CNAME === undefined ? undefined : normalize(records.CNAME), ttl };
}

class Authority {
  readonly names = new Map<string, StoredName>();
  readonly failures = new Map<string, FailureMode>();
  failAllMode: FailureMode | null = null;
  counts = new Map<string, number>();

  count(name: string, type: string): void {
    const key = `${name} ${type}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  queries(name?: string, type?: QueryType): number {
    const wanted = name === undefined ? undefined : normalize(name);
    let total = 0;
    for (const [key, n] of this.counts) {
      const [keyName, keyType] = key.split(' ');
      if ((wanted === undefined || keyName === wanted) && (type === undefined || keyType === type)) total += n;
    }
    return total;
  }

  /** The response to one query message, or null when the query must go unanswered. */
  answer(message: Buffer, transport: 'udp' | 'tcp'): Buffer | null {
    if (message.length < HEADER_BYTES) return null;
    const id = message.readUInt16BE(0);
    const flags = message.readUInt16BE(2);
    if (flags & QR) return null;
    const reply = (rcode: number, rest: Omit<Packet, 'id' | 'type' | 'flags'> = {}): Buffer =>
      packet.encode({
        ...rest,
        id,
        type: 'response',
        flags: packet.AUTHORITATIVE_ANSWER | (flags & (OPCODE_MASK | packet.RECURSION_DESIRED)) | rcode,
      });

    let query: DecodedPacket;
    try {
      query = packet.decode(message);
    } catch {
      return reply(RCODE.FORMERR);
    }
    if ((flags & OPCODE_MASK) !== 0) return reply(RCODE.NOTIMP);
    const question = query.questions?.length === 1 ? query.questions[0] : undefined;
    if (question === undefined) return reply(RCODE.FORMERR);

    const name = normalize(question.name);
    this.count(name, question.type);
    const opt = query.additionals?.find((rr): rr is OptAnswer => rr.type === 'OPT');
    const ednsReply: Answer[] = opt ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_LIMIT, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [];
    const base = { questions: [question], additionals: ednsReply };

    const failure = this.failures.get(`${name} ${question.type}`) ?? this.failures.get(`${name} *`) ?? this.failAllMode;
    if (failure === 'timeout') return null;
    if (failure === 'servfail') return reply(RCODE.SERVFAIL, base);
    if (failure === 'refused' || (question.class ?? 'IN') !== 'IN') return reply(RCODE.REFUSED, base);

    const { rcode, answers } = this.lookup(name, question.type);
    const full = reply(rcode, { ...base, answers });
    const udpLimit = Math.max(CLASSIC_UDP_LIMIT, Math.min(opt?.udpPayloadSize ?? 0, EDNS_UDP_LIMIT));
    if (transport === 'tcp' || full.length <= udpLimit) return full;
    // Too big for this UDP exchange: say so, and the client asks again over TCP.
    return packet.encode({ ...base, id, type: 'response', flags: packet.AUTHORITATIVE_ANSWER | packet.TRUNCATED_RESPONSE | (flags & packet.RECURSION_DESIRED) | rcode });
  }

  private lookup(qname: string, qtype: string): { rcode: number; answers: Answer[] } {
    const answers: Answer[] = [];
    let name = qname;
    const seen = new Set<string>();
    for (;;) {
      if (this.failures.get(`${name} *`) === 'nxdomain') return { rcode: RCODE.NXDOMAIN, answers };
      const data = this.names.get(name);
      // A chain whose target this server does not know ends with the CNAME alone, as an
      // authoritative server answers for a target outside its zones; only the asked name can be NXDOMAIN.
      if (data === undefined) return { rcode: answers.length === 0 ? RCODE.NXDOMAIN : RCODE.NOERROR, answers };
      if (data.CNAME !== undefined && qtype !== 'CNAME') {
        answers.push({ type: 'CNAME', name, ttl: data.ttl, class: 'IN', data: data.CNAME });
        seen.add(name);
        if (seen.has(data.CNAME) || seen.size >= MAX_CNAME_CHAIN) return { rcode: RCODE.SERVFAIL, answers: [] };
        name = data.CNAME;
        continue;
      }
      if (qtype === 'CNAME' && data.CNAME !== undefined) answers.push({ type: 'CNAME', name, ttl: data.ttl, class: 'IN', data: data.CNAME });
      if (qtype === 'A' || qtype === 'AAAA') {
        for (const ip of data[qtype]) answers.push({ type: qtype, name, ttl: data.ttl, class: 'IN', data: ip });
      }
      return { rcode: RCODE.NOERROR, answers };
    }
  }
}

export async function startDnsServer(opts: { host?: string } = {}): Promise<DnsTestServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isIPv4(host) && !isIPv6(host)) throw new Error(`dns-server: host ${host} is not an IP address`);
  const authority = new Authority();
  const { port, close } = await listenUdpAndTcp(host, (message, transport) => authority.answer(message, transport), { closeOnShortTcpMessage: true });

  return {
    host,
    port,
    address: isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`,
    set(name, records) {
      authority.names.set(normalize(name), validate(name, records));
    },
    remove(name) {
      authority.names.delete(normalize(name));
    },
    fail(name, mode, type) {
      const key = `${normalize(name)} ${type ?? '*'}`;
      if (mode !== null) authority.failures.set(key, mode);
      else if (type !== undefined) authority.failures.delete(key);
      else for (const k of [...authority.failures.keys()]) if (k.startsWith(`${normalize(name)} `)) authority.failures.delete(k);
    },
    failAll(mode) {
      authority.failAllMode = mode;
    },
    queries(name, type) {
      return authority.queries(name, type);
    },
    resetCounts() {
      authority.counts = new Map();
    },
    close,
  };
}

/** Runs `body` with a fresh server on 127.0.0.1, closed however `body` ends. */
export async function withDnsServer(body: (dns: DnsTestServer) => Promise<void>): Promise<void> {
  const dns = await startDnsServer();
  try {
    await body(dns);
  } finally {
    await dns.close();
  }
}
