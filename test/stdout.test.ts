/**
 * Whatever a command prints reaches its reader whole, through a pipe read slowly, and a
 * write that fails (the reader gone, the disk full) fails the command.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Far more than a pipe's 64 KiB buffer. */
const NODES = 1500;

let dir: string;
let config: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lbdns-stdout-'));
  config = join(dir, 'big.yaml');
  const nodes = Array.from({ length: NODES }, (_, i) => `  node-${i}: [10.1.${i >> 8}.${i & 255}]`);
  await writeFile(config, ['domain: c1.example.com', 'loadBalancers: {api: [10.0.0.10], apiInt: [10.0.0.20], ingress: [10.0.1.30]}', 'upstreams: [10.0.0.2]', 'nodes:', ...nodes, ''].join('\n'));
});

test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * The real CLI with its stdout on a real pipe (not the socket pair Node's spawn makes, whose
 * buffer is larger) into `reader`, a shell command ('': no pipe); the exit code is lbdns's when it fails.
 */
function lbdns(args: readonly string[], reader = 'cat', stdout: 'pipe' | number = 'pipe'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const script = `set -o pipefail; "$0" --import tsx cmd/lbdns.ts "$@"${reader === '' ? '' : ` | ${reader}`}`;
    const child = spawn('bash', ['-c', script, process.execPath, ...args], { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', stdout, 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

/** What the command prints into a file: no pipe involved. */
async function fileOutput(args: readonly string[], code = 0): Promise<Buffer> {
  const out = join(dir, 'stdout');
  const r = await lbdns(args, `cat > ${out}`);
  assert.is(r.code, code, r.stderr);
  return readFile(out);
}

/** A reader that takes nothing for a second, then everything. */
const SLOW = '{ sleep 1; cat; }';

for (const command of [['render-corefile'], ['display']]) {
  test(`${command[0]} prints all of a ${NODES}-node cluster's output through a pipe its reader empties only after a second`, async () => {
    const args = [...command, '--config', config];
    const whole = await fileOutput(args);
    assert.ok(whole.length > 64 * 1024, `${whole.length} bytes`);
    const r = await lbdns(args, SLOW);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.length, whole.length);
    assert.ok(r.stdout.equals(whole));
    if (command[0] === 'display') JSON.parse(r.stdout.toString());
  });
}

test('render-corefile --diff prints all of a long diff through a pipe', async () => {
  const args = ['render-corefile', '--config', config, '--diff', '--out', join(dir, 'absent-Corefile')];
  const whole = await fileOutput(args, 3);
  assert.ok(whole.length > 64 * 1024, `${whole.length} bytes`);
  const r = await lbdns(args, 'cat');
  assert.is(r.code, 3, r.stderr);
  assert.is(r.stdout.length, whole.length);
});

test('a reader that closes the pipe early fails the command: exit 1, EPIPE named, no stack trace', async () => {
  const r = await lbdns(['display', '--config', config], 'head -c 1 > /dev/null');
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /^lbdns: error: cannot write standard output: the reader closed the pipe before the output was complete \(EPIPE\); the output is incomplete\n$/);
});

test('a full disk under stdout fails the command: exit 1, ENOSPC named', async () => {
  const full = openSync('/dev/full', 'w');
  try {
    const r = await lbdns(['render-corefile', '--example'], '', full);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /^lbdns: error: cannot write standard output: no space left on the device \(ENOSPC\); the output is incomplete\n$/);
  } finally {
    closeSync(full);
  }
});

test.run();
