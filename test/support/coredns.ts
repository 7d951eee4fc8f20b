/**
 * Real CoreDNS (`make peers`) serving a Corefile lbdns wrote, on loopback, and the ways tests
 * ask it: Node's own stub resolver, and whole reply packets for what a resolver library hides
 * (each record once, the rcode, the packet size).
 */
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Resolver } from 'node:dns/promises';
import * as packet from 'dns-packet';
import type { Answer, DecodedPacket } from 'dns-packet';
import { freePort, peerBinary, startPeer, waitForOutput, type PeerProcess } from './peers.js';
import { runLbdns } from './run-cli.js';

export interface CoreDns {
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:PORT`, the form `Resolver.setServers` takes. */
  readonly address: string;
  readonly pid: number;
  /** A stub resolver asking only this server, once, with a 2 s timeout. */
  resolver(): Resolver;
  /** What CoreDNS printed so far (its log). */
  output(): string;
  /** Corefile reloads CoreDNS logged so far. */
  reloads(): number;
  close(): Promise<void>;
}

/**
 * Starts CoreDNS on `corefile`, its relative paths read from the Corefile's folder. A server
 * block without a port listens on `port` (default: a free loopback port).
 */
export async function startCoreDns(corefile: string, opts: { port?: number } = {}): Promise<CoreDns> {
  const port = opts.port ?? (await freePort());
  const peer: PeerProcess = startPeer(peerBinary('coredns'), ['-conf', corefile, '-dns.port', String(port)], { cwd: dirname(corefile) });
  // CoreDNS prints its version once every server block listens.
  await waitForOutput(peer, 'CoreDNS', (out) => /CoreDNS-\d+\.\d+\.\d+/.test(out), 15_000);
  const host = '127.0.0.1';
  return {
    host,
    port,
    address: `${host}:${port}`,
    pid: peer.child.pid as number,
    resolver: () => {
      const resolver = new Resolver({ timeout: 2000, tries: 1 });
      resolver.setServers([`${host}:${port}`]);
      return resolver;
    },
    output: () => peer.output(),
    reloads: () => (peer.output().match(/\[INFO\] Reloading complete/g) ?? []).length,
    close: () => peer.stop(),
  };
}

export interface RenderedCoreDns extends CoreDns {
  /** The folder holding the Corefile and the files beside it. */
  readonly dir: string;
  readonly corefile: string;
}

/**
 * `lbdns render-corefile ARGS…` into a fresh folder, listening on a free loopback port with
 * free health and ready ports, then real CoreDNS serving it.
 */
export async function renderAndServe(args: readonly string[]): Promise<RenderedCoreDns> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-coredns-'));
  const corefile = join(dir, 'Corefile');
  const port = await freePort();
  const rendered = await runLbdns([
    'render-corefile',
    ...args,
    '--listen',
    `127.0.0.1:${port}`,
    '--health-port',
    String(await freePort()),
    '--ready-port',
    String(await freePort()),
    '--out',
    corefile,
  ]);
  if (rendered.code !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`render-corefile exited ${rendered.code}: ${rendered.stderr}`);
  }
  const server = await startCoreDns(corefile, { port }).catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    ...server,
    dir,
    corefile,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The flags a monitor needs so the Corefile it writes can be served by a test's CoreDNS. */
export async function servableFlags(): Promise<{ listen: string; healthPort: string; readyPort: string; port: number }> {
  const port = await freePort();
  return { listen: `127.0.0.1:${port}`, healthPort: String(await freePort()), readyPort: String(await freePort()), port };
}

export type QueryType = 'A' | 'AAAA' | 'CNAME' | 'TXT' | 'MX' | 'SRV' | 'NS' | 'SOA' | 'PTR' | 'CAA' | 'HTTPS' | 'ANY';

export interface Reply {
  readonly rcode: string;
  /** `OWNER TTL TYPE DATA`, in answer order, owners lower case without the trailing dot. */
  readonly answers: readonly string[];
  /** The authority section's record types, in order (`SOA` for a negative answer). */
  readonly authority: readonly string[];
  /** The reply's size on the wire. */
  readonly bytes: number;
  readonly truncated: boolean;
}

function rdata(rr: Answer): string {
  const data = (rr as { data: unknown }).data;
  return typeof data === 'string' ? data.toLowerCase().replace(/\.$/, '') : JSON.stringify(data);
}

/** One UDP query with EDNS (payload 1232, as resolvers send it today) and the whole reply. */
export async function query(server: { host: string; port: number }, name: string, type: QueryType, opts: { udpSize?: number; qclass?: 'IN' | 'CH' | 'HS' } = {}): Promise<Reply> {
  const socket = createSocket('udp4');
  try {
    return await new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply for ${name} ${type} within 2 s`)), 2000);
      socket.on('message', (msg) => {
        clearTimeout(timer);
        const reply = packet.decode(msg) as DecodedPacket & { rcode?: string; flag_tc?: boolean };
        resolve({
          rcode: reply.rcode ?? 'NOERROR',
          answers: (reply.answers ?? []).map((rr) => `${rr.name.toLowerCase().replace(/\.$/, '')} ${(rr as { ttl?: number }).ttl ?? 0} ${rr.type} ${rdata(rr)}`),
          authority: (reply.authorities ?? []).map((rr) => rr.type),
          bytes: msg.length,
          truncated: reply.flag_tc === true,
        });
      });
      const q = packet.encode({
        type: 'query',
        id: 1 + Math.floor(Math.random() * 65000),
        flags: packet.RECURSION_DESIRED,
        questions: [{ type: type as 'A', name, class: opts.qclass ?? 'IN' }],
        additionals: [{ type: 'OPT', name: '.', udpPayloadSize: opts.udpSize ?? 1232 } as packet.OptAnswer],
      });
      socket.send(q, server.port, server.host);
    });
  } finally {
    socket.close();
  }
}

/** The answer section without TTLs: `OWNER TYPE DATA`. */
export async function answerOf(server: { host: string; port: number }, name: string, type: QueryType): Promise<string[]> {
  return (await query(server, name, type)).answers.map((a) => a.replace(/^(\S+) \d+ /, '$1 '));
}
