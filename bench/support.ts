/**
 * What every benchmark shares: figures and how they are printed, statistics, the machine,
 * the monitor run as the real bundle in a child process, its RSS and CPU time from /proc,
 * and a watcher that sees the Corefile being replaced.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { answerOf } from '../test/support/coredns.js';
import { fileURLToPath } from 'node:url';
import { UPSTREAM } from '../test/support/cluster-fixture.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** `BENCH_BUNDLE` points the benchmarks at another build, to compare two. */
export const BUNDLE = process.env.BENCH_BUNDLE || join(ROOT, 'dist/lbdns.mjs');

/** One measured value. `met` is absent for figures reported without a target. */
export interface Figure {
  readonly name: string;
  readonly value: string;
  readonly target?: string;
  readonly met?: boolean;
}

export interface BenchResult {
  readonly title: string;
  readonly figures: readonly Figure[];
  /** How it was measured, in a sentence or two, printed under the table. */
  readonly method: string;
}

export interface Bench {
  readonly name: string;
  run(): Promise<BenchResult>;
}

export const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
export const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

export function figure(name: string, value: string, target?: { readonly text: string; readonly met: boolean }): Figure {
  return target ? { name, value, target: target.text, met: target.met } : { name, value };
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile: a value that was actually measured. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

export function envSeconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}=${raw}: expected a positive number of seconds`);
  return value;
}

export interface Machine {
  readonly cpus: number;
  readonly model: string;
  readonly memory: string;
  readonly kernel: string;
  readonly node: string;
  readonly loadAverage: string;
}

export async function machine(): Promise<Machine> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  return {
    cpus: availableParallelism(),
    model,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel: release(),
    node: process.version,
    loadAverage: loadavg().map((l) => l.toFixed(2)).join(' '),
  };
}

// ---------------------------------------------------------------------------------------
// /proc

let clockTicks: number | undefined;

function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export interface ProcStats {
  readonly rssKiB: number;
  /** Peak RSS so far (VmHWM). */
  readonly hwmKiB: number;
  /** User + system CPU time, seconds. */
  readonly cpuSeconds: number;
}

export async function procStats(pid: number): Promise<ProcStats> {
  const [status, statLine] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]);
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM'), cpuSeconds: (utime + stime) / ticksPerSecond() };
}

// ---------------------------------------------------------------------------------------
// The monitor, as the bundle

const children = new Set<ChildProcess>();
let exitHookInstalled = false;

/** A benchmark that throws or is interrupted must not leave a monitor running. */
function killChildrenOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of children) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

export interface MonitorProcess {
  readonly pid: number;
  /** performance.now() just before the spawn. */
  readonly spawnedAt: number;
  /** `HOST:PORT` of /healthz, /readyz and /metrics. */
  readonly health: string;
  logs(): Record<string, unknown>[];
  stop(): Promise<void>;
}

export interface MonitorArgs {
  readonly kubeconfig: string;
  readonly out: string;
  readonly dnsServer?: string;
  /** More watch-lb-status arguments. */
  readonly extra?: readonly string[];
}

/** `node dist/lbdns.mjs watch-lb-status …`, returned once it logs that it is watching. */
export async function spawnMonitor(args: MonitorArgs): Promise<MonitorProcess> {
  killChildrenOnExit();
  const argv = ['watch-lb-status', args.kubeconfig, '--out', args.out, '--upstream', UPSTREAM, '--metrics-addr', '127.0.0.1:0'];
  if (args.dnsServer !== undefined) argv.push('--dns-server', args.dnsServer);
  argv.push(...(args.extra ?? []));
  const spawnedAt = performance.now();
  // Run as `lbdns` runs in the image: by its #! line, with the Node flags that line carries.
  const child = spawn(BUNDLE, argv, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LBDNS_LOG_LEVEL: 'info' } });
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    });
  });
  const logs = (): Record<string, unknown>[] =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const health = await new Promise<string>((resolve, reject) => {
    const check = setInterval(() => {
      const watching = logs().find((l) => l.msg === 'watching');
      if (watching) {
        clearInterval(check);
        resolve(String(watching.health));
      }
    }, 5);
    void exited.then((code) => {
      clearInterval(check);
      reject(new Error(`the monitor exited with ${code} before watching:\n${stderr}`));
    });
  });
  return {
    pid: child.pid as number,
    spawnedAt,
    health,
    logs,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------
// Seeing the Corefile replaced

export interface Replacement {
  /** performance.now() when the directory event announcing it arrived. */
  readonly at: number;
  readonly text: string;
}

/**
 * Inode and times: a file system may hand a freed inode number to the next temp file, but
 * the rename still moves its change time.
 */
async function fileIdentity(path: string): Promise<string | undefined> {
  const s = await stat(path, { bigint: true }).catch(() => undefined);
  return s && `${s.ino}:${s.mtimeNs}:${s.ctimeNs}`;
}

/**
 * Watches the Corefile's directory: lbdns replaces the file by renaming a temp file over
 * it, so every write is a new file there. A slow poll backs up the inotify events.
 */
export class CorefileWatcher {
  private readonly watcher: FSWatcher;
  private readonly poll: NodeJS.Timeout;
  private identity: string | undefined;
  private replacements = 0;
  private checking: Promise<void> = Promise.resolve();
  private waiter: { readonly accept: (text: string) => boolean; readonly resolve: (r: Replacement) => void } | undefined;

  private constructor(private readonly path: string) {
    this.watcher = watch(dirname(path), (_event, name) => {
      if (name === null || name === basename(path)) this.check(performance.now());
    });
    this.poll = setInterval(() => this.check(performance.now()), 100);
  }

  static async open(path: string): Promise<CorefileWatcher> {
    const w = new CorefileWatcher(path);
    w.identity = await fileIdentity(path);
    return w;
  }

  /** How many times the file was replaced since the watcher opened. */
  get writes(): number {
    return this.replacements;
  }

  /** Resolves at the first replacement whose content `accept`s; arm it before causing the change. */
  next(accept: (text: string) => boolean, timeoutMs: number, what: string): Promise<Replacement> {
    if (this.waiter) throw new Error('CorefileWatcher: one waiter at a time');
    return new Promise<Replacement>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.waiter = {
        accept,
        resolve: (r) => {
          clearTimeout(timer);
          this.waiter = undefined;
          resolve(r);
        },
      };
      this.check(performance.now());
    });
  }

  close(): void {
    this.watcher.close();
    clearInterval(this.poll);
  }

  private check(at: number): void {
    this.checking = this.checking.then(async () => {
      const identity = await fileIdentity(this.path);
      if (identity === undefined || identity === this.identity) return;
      this.identity = identity;
      this.replacements += 1;
      const waiter = this.waiter;
      if (!waiter) return;
      const text = await readFile(this.path, 'utf8').catch(() => '');
      if (waiter.accept(text)) waiter.resolve({ at, text });
    });
  }
}

// ---------------------------------------------------------------------------------------
// Talking to the test API server over HTTP, as a controller would

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** A merge patch sent over HTTP to `path` (e.g. a status subresource); rejects on any status but 200. */
export function mergePatch(serverUrl: string, path: string, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  return new Promise<void>((resolve, reject) => {
    const req = request(
      new URL(path, serverUrl),
      { method: 'PATCH', agent, headers: { 'content-type': 'application/merge-patch+json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PATCH ${path}: HTTP ${res.statusCode}: ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function closeHttpAgent(): void {
  agent.destroy();
}

/** When `dns` first answers `name` A with `ip`, asked every 10 ms (performance.now()). */
export async function firstAnswer(dns: { host: string; port: number }, name: string, ip: string, timeoutMs: number): Promise<number> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const answer = await answerOf(dns, name, 'A').catch(() => []);
    if (answer.some((rr) => rr.endsWith(` A ${ip}`))) return performance.now();
    if (performance.now() > until) throw new Error(`CoreDNS did not answer ${name} with ${ip} within ${timeoutMs} ms`);
    await sleep(10);
  }
}
