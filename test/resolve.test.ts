import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ResolveError, ValidationError } from '../lib/errors.js';
import { HostResolver, type ResolverOptions, type RetryInfo } from '../lib/resolve/host-resolver.js';
import { parseDnsServer } from '../lib/grammar/host-port.js';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';

let dns: DnsTestServer;

test.before(async () => {
  dns = await startDnsServer();
});

test.after(async () => {
  await dns.close();
});

const RETRIES = 2;

function resolver(opts: ResolverOptions = {}): HostResolver {
  return new HostResolver({ servers: [dns.address], timeoutMs: 150, retries: RETRIES, minRetryDelayMs: 5, ...opts });
}

async function failure(promise: Promise<unknown>): Promise<ResolveError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ResolveError) return err;
    throw err;
  }
  throw new Error('expected the resolution to fail');
}

test('an A-only name resolves to its IPv4 addresses and no IPv6', async () => {
  dns.set('v4only.lb.test', { A: ['192.0.2.10', '192.0.2.11'] });
  const r = await resolver().resolve('v4only.lb.test');
  assert.equal(r, { hostname: 'v4only.lb.test', v4: ['192.0.2.10', '192.0.2.11'], v6: [], ttlSeconds: 60 });
});

test('an AAAA-only name resolves to its IPv6 addresses and no IPv4', async () => {
  dns.set('v6only.lb.test', { AAAA: ['2001:db8::20'] });
  const r = await resolver().resolve('v6only.lb.test');
  assert.equal(r.v4, []);
  assert.equal(r.v6, ['2001:db8::20']);
});

test('a dual-stack name resolves to both families', async () => {
  dns.set('dual.lb.test', { A: ['198.51.100.7'], AAAA: ['2001:db8::7'] });
  const r = await resolver().resolve('dual.lb.test');
  assert.equal(r.v4, ['198.51.100.7']);
  assert.equal(r.v6, ['2001:db8::7']);
});

test('many addresses come back sorted numerically and de-duplicated', async () => {
  dns.set('many.lb.test', {
    A: ['10.0.0.100', '10.0.0.9', '10.0.0.20', '10.0.0.9', '9.255.255.255', '10.0.0.100'],
    AAAA: ['2001:db8::a', '2001:db8::1:0', '2001:db8::9', '2001:db8::a'],
  });
  const r = await resolver().resolve('many.lb.test');
  assert.equal(r.v4, ['9.255.255.255', '10.0.0.9', '10.0.0.20', '10.0.0.100']);
  assert.equal(r.v6, ['2001:db8::9', '2001:db8::a', '2001:db8::1:0']);
});

test('IPv6 addresses come back in canonical form', async () => {
  dns.set('canon.lb.test', { AAAA: ['2001:DB8:0:0:0:0:0:00FF'] });
  const r = await resolver().resolve('canon.lb.test');
  assert.equal(r.v6, ['2001:db8::ff']);
});

test('the TTL is the smallest TTL seen along a CNAME chain', async () => {
  dns.set('ttl-target.lb.test', { A: ['192.0.2.30'], AAAA: ['2001:db8::30'], ttl: 300 });
  dns.set('ttl-alias.lb.test', { CNAME: 'ttl-target.lb.test', ttl: 45 });
  dns.set('ttl-short.lb.test', { A: ['192.0.2.31'], ttl: 7 });
  dns.set('ttl-alias2.lb.test', { CNAME: 'ttl-short.lb.test', ttl: 600 });
  assert.is((await resolver().resolve('ttl-alias.lb.test')).ttlSeconds, 45);
  assert.is((await resolver().resolve('ttl-alias2.lb.test')).ttlSeconds, 7);
});

test('a second resolve sees the addresses the server serves now', async () => {
  const r = resolver();
  dns.set('moving.lb.test', { A: ['192.0.2.40'] });
  assert.equal((await r.resolve('moving.lb.test')).v4, ['192.0.2.40']);
  dns.set('moving.lb.test', { A: ['192.0.2.41', '192.0.2.42'], AAAA: ['2001:db8::41'] });
  const second = await r.resolve('moving.lb.test');
  assert.equal(second.v4, ['192.0.2.41', '192.0.2.42']);
  assert.equal(second.v6, ['2001:db8::41']);
});

test('a CNAME resolves to the addresses of its target', async () => {
  dns.set('router.lb.test', { A: ['203.0.113.5', '203.0.113.6'], AAAA: ['2001:db8::5'] });
  dns.set('apps-alias.lb.test', { CNAME: 'router.lb.test.' });
  const r = await resolver().resolve('apps-alias.lb.test');
  assert.equal(r.v4, ['203.0.113.5', '203.0.113.6']);
  assert.equal(r.v6, ['2001:db8::5']);
});

test('an answer too large for UDP is fetched completely over TCP', async () => {
  const v6 = Array.from({ length: 60 }, (_, i) => `2001:db8::${(i + 1).toString(16)}`);
  dns.set('huge.lb.test', { AAAA: v6 });
  const r = await resolver().resolve('huge.lb.test');
  assert.is(r.v6.length, 60);
  assert.is(dns.queries('huge.lb.test', 'AAAA'), 2, 'one truncated UDP answer, then one TCP query');
});

test('a name that does not exist fails with NXDOMAIN after one query per family', async () => {
  const err = await failure(resolver().resolve('missing.lb.test'));
  assert.is(err.reason, 'NXDOMAIN');
  assert.is(err.hostname, 'missing.lb.test');
  assert.is(dns.queries('missing.lb.test', 'A'), 1);
  assert.is(dns.queries('missing.lb.test', 'AAAA'), 1);
});

test('a name with neither A nor AAAA records fails with NODATA without retrying', async () => {
  dns.set('empty.lb.test', {});
  const err = await failure(resolver().resolve('empty.lb.test'));
  assert.is(err.reason, 'NODATA');
  assert.is(dns.queries('empty.lb.test'), 2);
});

test('SERVFAIL is retried, then fails with SERVFAIL; the first family to give up cancels the other', async () => {
  dns.set('broken.lb.test', { A: ['192.0.2.50'] });
  dns.fail('broken.lb.test', 'servfail');
  const err = await failure(resolver().resolve('broken.lb.test'));
  assert.is(err.reason, 'SERVFAIL');
  const counts = [dns.queries('broken.lb.test', 'A'), dns.queries('broken.lb.test', 'AAAA')];
  assert.is(Math.max(...counts), RETRIES + 1);
  assert.ok(Math.min(...counts) >= RETRIES, `both families were retried: ${counts.join(', ')}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal([dns.queries('broken.lb.test', 'A'), dns.queries('broken.lb.test', 'AAAA')], counts, 'no query after the failure was reported');
});

test('a SERVFAIL that clears before the retries run out still resolves', async () => {
  dns.set('flaky.lb.test', { A: ['192.0.2.60'] });
  dns.fail('flaky.lb.test', 'servfail');
  const r = resolver({ onRetry: () => dns.fail('flaky.lb.test', null) });
  assert.equal((await r.resolve('flaky.lb.test')).v4, ['192.0.2.60']);
  assert.is(dns.queries('flaky.lb.test', 'A'), 2);
});

test('a server that never answers fails with TIMEOUT within the retry budget', async () => {
  dns.set('silent.lb.test', { A: ['192.0.2.70'] });
  dns.fail('silent.lb.test', 'timeout');
  const started = performance.now();
  const err = await failure(resolver({ timeoutMs: 100, retries: 1 }).resolve('silent.lb.test'));
  const elapsed = performance.now() - started;
  assert.is(err.reason, 'TIMEOUT');
  assert.is(dns.queries('silent.lb.test', 'A'), 2);
  assert.ok(elapsed < 1000, `took ${elapsed} ms`);
});

test('a refusing server fails with REFUSED after the retries', async () => {
  dns.set('refused.lb.test', { A: ['192.0.2.80'] });
  dns.fail('refused.lb.test', 'refused');
  const err = await failure(resolver().resolve('refused.lb.test'));
  assert.is(err.reason, 'REFUSED');
  assert.is(dns.queries('refused.lb.test', 'A'), RETRIES + 1);
});

test('a failing family fails the whole hostname even though the other family answered', async () => {
  dns.set('half.lb.test', { A: ['192.0.2.90'], AAAA: ['2001:db8::90'] });
  dns.fail('half.lb.test', 'servfail', 'AAAA');
  const err = await failure(resolver().resolve('half.lb.test'));
  assert.is(err.reason, 'SERVFAIL');
  assert.match(err.message, 'AAAA');
  assert.is(dns.queries('half.lb.test', 'A'), 1);
});

test('onRetry reports each retry with its reason, family and attempt', async () => {
  dns.set('counted.lb.test', { AAAA: ['2001:db8::99'] });
  dns.fail('counted.lb.test', 'servfail');
  const seen: RetryInfo[] = [];
  await failure(resolver({ onRetry: (info) => seen.push(info) }).resolve('counted.lb.test'));
  const forA = seen.filter((i) => i.family === 'A');
  assert.equal(forA, [
    { hostname: 'counted.lb.test', family: 'A', reason: 'SERVFAIL', attempt: 1 },
    { hostname: 'counted.lb.test', family: 'A', reason: 'SERVFAIL', attempt: 2 },
  ]);
  assert.is(seen.length, 2 * RETRIES);
});

test('the error message names the hostname, the server asked and the attempts made', async () => {
  dns.fail('msg.lb.test', 'servfail');
  const err = await failure(resolver().resolve('msg.lb.test'));
  assert.match(err.message, 'msg.lb.test');
  assert.match(err.message, dns.address);
  assert.match(err.message, `${RETRIES + 1} attempts`);
});

test('a --dns-server value that is not IP, IP:PORT or [IPv6]:PORT is refused', () => {
  for (const bad of ['dns.example.com', '10.0.0.1:0', '10.0.0.1:65536', '010.0.0.1', '[fd00::1]', 'fd00::1%eth0', '10.0.0.1:53:53', '']) {
    try {
      new HostResolver({ servers: [bad] });
      assert.unreachable(`${JSON.stringify(bad)} was accepted`);
    } catch (err) {
      assert.instance(err, ValidationError, `${JSON.stringify(bad)}: ${String(err)}`);
      assert.is((err as ValidationError).field, '--dns-server');
    }
  }
});

test('--dns-server accepts IP, IP:PORT and [IPv6]:PORT, defaulting to port 53', () => {
  assert.is(parseDnsServer('10.0.0.10'), '10.0.0.10:53');
  assert.is(parseDnsServer('10.0.0.10:5353'), '10.0.0.10:5353');
  assert.is(parseDnsServer('FD00:0::10'), '[fd00::10]:53');
  assert.is(parseDnsServer('[fd00::10]:5353'), '[fd00::10]:5353');
});

test('a failed resolve leaves no query running that keeps the process alive', async () => {
  dns.set('exit.lb.test', { A: ['192.0.2.100'], AAAA: ['2001:db8::100'] });
  dns.fail('exit.lb.test', 'timeout', 'A');
  dns.fail('exit.lb.test', 'servfail', 'AAAA');
  const resolveModule = fileURLToPath(new URL('../lib/resolve/host-resolver.ts', import.meta.url));
  // AAAA fails at once (no retries) while the A query would wait 5 s for its timeout: the
  // child exits promptly only if that query is cancelled when the call fails.
  const script = `
    const { HostResolver } = await import(${JSON.stringify(resolveModule)});
    const r = new HostResolver({ servers: [${JSON.stringify(dns.address)}], timeoutMs: 5000, retries: 0 });
    const outcome = await r.resolve('exit.lb.test').then(() => 'resolved', (err) => err.reason);
    process.stdout.write(outcome);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let doneAt = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    doneAt = performance.now();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 8000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(killer);
  assert.is(code, 0);
  assert.is(output, 'SERVFAIL');
  const lingered = performance.now() - doneAt;
  assert.ok(lingered < 1000, `the child lingered ${Math.round(lingered)} ms after its resolve failed`);
});

test('servers given as a function are asked at each resolution: a new resolv.conf reaches the next lookup', async () => {
  const other = await startDnsServer();
  try {
    dns.set('moving.lb.test', { A: ['192.0.2.21'] });
    other.set('moving.lb.test', { A: ['192.0.2.22'] });
    let servers = [dns.address];
    const r = new HostResolver({ servers: () => servers, timeoutMs: 150, retries: 0 });
    assert.equal((await r.resolve('moving.lb.test')).v4, ['192.0.2.21']);
    servers = [other.address];
    assert.equal((await r.resolve('moving.lb.test')).v4, ['192.0.2.22']);
  } finally {
    await other.close();
  }
});

test.run();
