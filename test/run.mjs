// Runs every test file under uvu and refuses a run that executed no test (uvu itself exits 0
// when its pattern matched nothing), that skipped one, or that left a process running.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pattern = process.argv[2] ?? '\\.test\\.ts$';
const limitMs = Number(process.env.LBDNS_TEST_TIMEOUT_MS ?? 15 * 60 * 1000);

// Files the tests write are 0644 whatever the caller's umask: lbdns refuses a group-writable template.
process.umask(0o022);
// A process group of its own: killing it kills every CoreDNS, kube-apiserver or dnsmasq the
// tests started too, which a SIGKILLed test process could not stop itself.
const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(root, 'node_modules/uvu/bin.js'), 'test', pattern],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NO_COLOR: '1' }, detached: true },
);
const killGroup = () => {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone.
  }
};
const groupAlive = () => {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
};
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
      killGroup();
    }, 10_000);
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => killGroup());
const timer = setTimeout(() => {
  console.error(`test run exceeded ${limitMs} ms; killing it`);
  killGroup();
}, limitMs);
child.on('exit', async (code, signal) => {
  clearTimeout(timer);
  clearTimeout(lingerTimer);
  // Every process a test starts, it stops: one still running a moment after the tests is a leak.
  for (let waited = 0; groupAlive() && waited < 3000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  const leaked = groupAlive();
  if (leaked) {
    console.error('a process the tests started outlived them; killing it');
    killGroup();
  }
  const num = (label) => Number((out.match(new RegExp(`${label}:\\s+(\\d+)`)) ?? [])[1] ?? 0);
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped');
  // uvu counts a skipped test apart from its total.
  const failed = total - passed;
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (total === 0) {
    console.error('no test was executed: treating the run as failed');
    process.exit(1);
  }
  // uvu skips every other test of a file with a test.only, and test.skip skips one: neither may pass a run.
  if (skipped > 0) console.error('tests were skipped (a test.only or test.skip left in): treating the run as failed');
  process.exit(code === 0 && signal === null && failed === 0 && skipped === 0 && !leaked ? 0 : 1);
});
