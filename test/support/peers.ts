/**
 * The real programs the tests drive (built by `make peers` into .peers/bin), and the processes
 * started from them: each is registered here and killed when the test process exits, whatever
 * a test did, so no CoreDNS or kube-apiserver outlives a failed test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The path of a peer binary; a missing one fails the test that needs it (never a skip). */
export function peerBinary(name: 'coredns' | 'kube-apiserver'): string {
  const path = join(ROOT, '.peers', 'bin', name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`${path} is missing: run \`make peers\` (the tests drive the real ${name})`);
  }
  return path;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface PeerProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export function startPeer(binary: string, args: readonly string[], opts: { cwd?: string } = {}): PeerProcess {
  const child = spawn(binary, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  // A peer shared by the tests of a process must not keep it alive once they are done: the
  // exit handler above stops whatever is still running then.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  return {
    child,
    output: () => out,
    exited,
    stop: async (graceMs = 5000) => {
      if (!running.has(child)) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `ready` sees the output, or fails with the output when the process exits first or time runs out. */
export async function waitForOutput(peer: PeerProcess, what: string, ready: (output: string) => boolean, timeoutMs: number): Promise<void> {
  const start = Date.now();
  let exited: number | string | undefined;
  void peer.exited.then((code) => (exited = code));
  while (!ready(peer.output())) {
    if (exited !== undefined) throw new Error(`${what} exited (${exited}) before it was ready:\n${peer.output().slice(-4000)}`);
    if (Date.now() - start > timeoutMs) {
      await peer.stop(0);
      throw new Error(`${what} was not ready after ${timeoutMs} ms:\n${peer.output().slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Ports this process handed out: a port freed again is not handed out twice, as a test often asks for several before binding any. */
const handedOut = new Set<number>();

/**
 * Where ports are picked: below the kernel's ephemeral range, which the source ports of every
 * outgoing connection (to the API server, from the API server to etcd) come from. A port
 * picked inside it could be taken by such a connection between the asking and the binding,
 * and the server meant for it would fail with EADDRINUSE.
 */
const PICK_FROM = 10_000;
function pickBelow(): number {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  if (!Number.isInteger(low) || low - PICK_FROM < 1000) throw new Error(`net.ipv4.ip_local_port_range starts at ${low}: leaves no room below it for the tests' ports (they pick from ${PICK_FROM} up)`);
  return low;
}
const EPHEMERAL_FROM = pickBelow();

const bindable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const tcp = createServer();
    tcp.once('error', () => resolve(false));
    tcp.listen(port, host, () => {
      const udp = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      udp.once('error', () => tcp.close(() => resolve(false)));
      udp.bind(port, host, () => udp.close(() => tcp.close(() => resolve(true))));
    });
  });

/** A loopback port free for both UDP and TCP at the time of asking, outside the ephemeral range, and not handed out before in this process. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = PICK_FROM + Math.floor(Math.random() * (EPHEMERAL_FROM - PICK_FROM));
    if (handedOut.has(port) || !(await bindable(host, port))) continue;
    handedOut.add(port);
    return port;
  }
}
