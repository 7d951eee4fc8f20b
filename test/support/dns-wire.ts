/**
 * The wire-level parts the loopback DNS test servers share: header constants, TCP's
 * two-byte length framing (RFC 1035 §4.2.2), and serving UDP and TCP on one port.
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, isIPv6, type Socket } from 'node:net';

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
export const OPCODE_MASK = 0x7800;
export const HEADER_BYTES = 12;
export const CLASSIC_UDP_LIMIT = 512;
const BIND_ATTEMPTS = 20;

/** `message` as TCP carries it: behind its length. */
export function frame(message: Buffer): Buffer {
  const framed = Buffer.alloc(2 + message.length);
  framed.writeUInt16BE(message.length, 0);
  message.copy(framed, 2);
  return framed;
}

/** The first whole message at the start of a TCP stream and the bytes after it, or undefined until it has all arrived. */
export function unframe(stream: Buffer): { message: Buffer; rest: Buffer } | undefined {
  if (stream.length < 2) return undefined;
  const length = stream.readUInt16BE(0);
  if (stream.length < 2 + length) return undefined;
  return { message: stream.subarray(2, 2 + length), rest: stream.subarray(2 + length) };
}

/** The reply to one query message, or null when the query must go unanswered. */
export type QueryHandler = (message: Buffer, transport: 'udp' | 'tcp') => Buffer | null | Promise<Buffer | null>;

export interface ListenOptions {
  /** End a TCP connection whose next message is shorter than a DNS header instead of handing it on. */
  readonly closeOnShortTcpMessage?: boolean;
}

export interface UdpTcpListener {
  readonly port: number;
  /** Closes both sockets and every open TCP connection; calling it again returns the same promise. */
  close(): Promise<void>;
}

function serveTcp(socket: Socket, onQuery: QueryHandler, opts: ListenOptions): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let next = unframe(pending); next !== undefined && !socket.destroyed; next = unframe(pending)) {
      pending = next.rest;
      // Not even a header: the stream cannot be trusted to be framed right, so end it as servers do.
      if (opts.closeOnShortTcpMessage && next.message.length < HEADER_BYTES) {
        socket.destroy();
        return;
      }
      void Promise.resolve(onQuery(next.message, 'tcp')).then((response) => {
        if (response !== null && !socket.destroyed) socket.write(frame(response));
      });
    }
  });
}

/** Serves `onQuery` over UDP and TCP on one free port of `host`. */
export async function listenUdpAndTcp(host: string, onQuery: QueryHandler, opts: ListenOptions = {}): Promise<UdpTcpListener> {
  for (let attempt = 1; ; attempt++) {
    const udp = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    udp.bind(0, host);
    await once(udp, 'listening');
    const { port } = udp.address();
    const sockets = new Set<Socket>();
    const tcp = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      serveTcp(socket, onQuery, opts);
    });
    try {
      tcp.listen(port, host);
      await once(tcp, 'listening');
    } catch (err) {
      udp.close();
      // The free UDP port may be taken for TCP by someone else: pick another.
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < BIND_ATTEMPTS) continue;
      throw err;
    }
    udp.on('message', (message, peer) => {
      void Promise.resolve(onQuery(message, 'udp')).then((response) => {
        // A client that went away is not the server's problem: drop the reply as a real server would.
        if (response !== null) udp.send(response, peer.port, peer.address, () => undefined);
      });
    });
    udp.on('error', () => undefined);
    let closed: Promise<void> | undefined;
    return {
      port,
      close() {
        closed ??= (async () => {
          for (const socket of sockets) socket.destroy();
          await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
        })();
        return closed;
      },
    };
  }
}
