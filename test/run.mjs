// Runs every test file under uvu and refuses a run that executed no test:
// uvu itself exits 0 when its pattern matched nothing.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pattern = process.argv[2] ?? '\\.test\\.ts$';
const limitMs = Number(process.env.LBDNS_TEST_TIMEOUT_MS ?? 15 * 60 * 1000);

// Files the tests write are 0644 whatever the caller's umask: lbdns refuses a group-writable template.
process.umask(0o022);
const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(root, 'node_modules/uvu/bin.js'), 'test', pattern],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NO_COLOR: '1' } },
);
let out = '';
let lingerTimer;
child.stdout.on('data', (chunk) => {
  out += chunk;
  process.stdout.write(chunk);
  // Every server or timer a test starts, it stops: a process that outlives its summary
  // holds something a test left open. Fail fast instead of hanging CI.
  if (lingerTimer === undefined && /Duration:/.test(out)) {
    lingerTimer = setTimeout(() => {
      console.error('the test process did not exit after its summary: a test left a server, socket or timer open');
      child.kill('SIGKILL');
    }, 10_000);
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill('SIGKILL'));
const timer = setTimeout(() => {
  console.error(`test run exceeded ${limitMs} ms; killing it`);
  child.kill('SIGKILL');
}, limitMs);
child.on('exit', (code, signal) => {
  clearTimeout(timer);
  clearTimeout(lingerTimer);
  const num = (label) => Number((out.match(new RegExp(`${label}:\\s+(\\d+)`)) ?? [])[1] ?? 0);
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped');
  const failed = total - passed - skipped;
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (total === 0) {
    console.error('no test was executed: treating the run as failed');
    process.exit(1);
  }
  process.exit(code === 0 && signal === null && failed === 0 ? 0 : 1);
});
