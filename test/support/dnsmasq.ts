/** Debian's dnsmasq, as the tests run it: on loopback, in the foreground, stopped by the test. */
import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { Resolver } from 'node:dns/promises';
import { until } from './cluster-fixture.js';

export async function dnsmasqBinary(): Promise<string> {
  for (const path of ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq']) {
    if (await access(path).then(() => true, () => false)) return path;
  }
  throw new Error('dnsmasq is not installed: run "make test-deps" (as root; installs dnsmasq-base), which "make test" does');
}

export interface Dnsmasq {
  readonly resolver: Resolver;
  /** `127.0.0.1:PORT`. */
  readonly address: string;
  /** SIGHUP, as systemd's reload of lbdns-dnsmasq.service sends it. */
  reload(): void;
  stop(): Promise<void>;
}

/**
 * dnsmasq with `args` (which must make it answer on 127.0.0.1:`port`), once it answers A for
 * `probe`; killed again if it never does. As root it stays root: the test's files are not
 * readable by the user it would drop to.
 */
export async function startDnsmasq(args: readonly string[], port: number, probe: string): Promise<Dnsmasq> {
  const child = spawn(await dnsmasqBinary(), ['--keep-in-foreground', '--log-facility=-', ...args, ...(process.getuid?.() === 0 ? ['--user=root'] : [])], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  // Two tries of 1 s: the test process answers forwarded queries itself, between other tests' work.
  const resolver = new Resolver({ timeout: 1000, tries: 2 });
  resolver.setServers([`127.0.0.1:${port}`]);
  try {
    await until('dnsmasq answers', async () => {
      if (child.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr}`);
      return resolver.resolve4(probe).then(() => true, () => false);
    }, 5000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { resolver, address: `127.0.0.1:${port}`, reload: () => void child.kill('SIGHUP'), stop };
}
