/**
 * What a client asking the cluster's CoreDNS gets back: the Corefile `render-corefile` wrote,
 * served by real CoreDNS on loopback and asked through Node's own resolver, with a test DNS
 * server standing in for the upstream resolvers (`UPSTREAM` in the flags is its address).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Resolver } from 'node:dns/promises';
import { query, renderAndServe, type CoreDns } from './support/coredns.js';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';

let upstream: DnsTestServer;
const servers: CoreDns[] = [];
/** Stands for the test upstream's address in render flags; `UPSTREAM_HOST:` for another address on its port. */
const UPSTREAM = '@upstream';

async function serve(args: readonly string[]): Promise<Resolver> {
  const withUpstream = args.map((a) => (a === UPSTREAM ? upstream.address : a.replace(/^(127\.0\.0\.\d+):$/, `$1:${upstream.port}`)));
  // Said here: uvu drops an error thrown in a suite's before hook, and its tests then fail without a word.
  const server = await renderAndServe(withUpstream).catch((err: Error) => {
    console.error(`corefile-answers: serving ${withUpstream.join(' ')} failed: ${err.message}`);
    throw err;
  });
  servers.push(server);
  return server.resolver();
}

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as NodeJS.ErrnoException).code);
  }
  return 'no error';
}

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

async function setup(): Promise<void> {
  upstream = await startDnsServer();
  upstream.set('www.example.org', { A: ['192.0.2.99'], AAAA: ['2001:db8::99'], ttl: 300 });
  upstream.set('foo.mycluster.example.com', { A: ['192.0.2.77'] });
  upstream.set('api.c2.example.com', { A: ['192.0.2.88'] });
}

async function teardown(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await upstream.close();
}

/* ----------------------------------------------------------------- the example cluster */

const example = suite<{ dns: Resolver }>('the example cluster (dual stack, three nodes)');
const EXAMPLE_D = 'mycluster.example.com';

example.before(async (ctx) => {
  await setup();
  ctx.dns = await serve(['--example', '--upstream', UPSTREAM]);
});
example.after(teardown);

example('api answers every A of the api LB', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`api.${EXAMPLE_D}`)), ['10.0.0.10', '10.0.0.11']);
});

example('api answers every AAAA of the api LB', async ({ dns }) => {
  assert.equal(await dns.resolve6(`api.${EXAMPLE_D}`), ['fd00:10::10']);
});

example('api-int answers the internal LB, not the external one', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`api-int.${EXAMPLE_D}`)), ['10.0.0.20', '10.0.0.21']);
  assert.equal(await dns.resolve6(`api-int.${EXAMPLE_D}`), ['fd00:10::20']);
});

example('a name under apps answers the ingress LB', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`console-openshift-console.apps.${EXAMPLE_D}`)), ['10.0.1.30', '10.0.1.31']);
  assert.equal(await dns.resolve6(`x.apps.${EXAMPLE_D}`), ['fd00:10::30']);
});

example('a name two labels under apps answers the ingress LB too', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`a.b.apps.${EXAMPLE_D}`)), ['10.0.1.30', '10.0.1.31']);
});

example('query names are matched without regard to case', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`API.MyCluster.Example.COM`)), ['10.0.0.10', '10.0.0.11']);
});

example("apps itself, the wildcard's apex, is an empty name: NODATA with the cluster's SOA, not the wildcard's addresses, never forwarded", async () => {
  const server = servers[0] as CoreDns;
  upstream.resetCounts();
  for (const type of ['A', 'AAAA', 'TXT'] as const) {
    const reply = await query(server, `apps.${EXAMPLE_D}`, type);
    assert.equal([type, reply.rcode, reply.answers, reply.authority], [type, 'NOERROR', [], ['SOA']]);
  }
  assert.is(upstream.queries(), 0);
});

example('a node answers under its short name', async ({ dns }) => {
  assert.equal(await dns.resolve4('master-0'), ['10.0.0.5']);
  assert.equal(await dns.resolve6('master-0'), ['fd00:10::5']);
});

example('a node answers under its name in the cluster domain', async ({ dns }) => {
  assert.equal(await dns.resolve4(`master-1.${EXAMPLE_D}`), ['10.0.0.6']);
  assert.equal(await dns.resolve6(`master-2.${EXAMPLE_D}`), ['fd00:10::7']);
});

example('served records carry the TTL as capped by cache 30', async ({ dns }) => {
  const records = await dns.resolve4(`api.${EXAMPLE_D}`, { ttl: true });
  assert.equal(records.map((r) => r.ttl), [30, 30]);
});

example('a name lbdns does not serve in the cluster domain is forwarded upstream', async ({ dns }) => {
  assert.equal(await dns.resolve4(`foo.${EXAMPLE_D}`), ['192.0.2.77']);
});

example('a name below api is not api: it is forwarded upstream', async ({ dns }) => {
  assert.is(await errorCode(dns.resolve4(`x.api.${EXAMPLE_D}`)), 'ENOTFOUND');
});

example('an outside name is forwarded upstream, its TTL capped by the cache', async ({ dns }) => {
  const records = await dns.resolve4('www.example.org', { ttl: true });
  assert.equal(records, [{ address: '192.0.2.99', ttl: 30 }]);
  assert.equal(await dns.resolve6('www.example.org'), ['2001:db8::99']);
});

example("other query types for a served name are answered empty by CoreDNS with the cluster's SOA, so resolvers cache it, never forwarded", async () => {
  const server = servers[0] as CoreDns;
  upstream.resetCounts();
  for (const name of [`api.${EXAMPLE_D}`, `api-int.${EXAMPLE_D}`, `x.apps.${EXAMPLE_D}`]) {
    for (const type of ['TXT', 'MX', 'CNAME', 'SRV', 'HTTPS'] as const) {
      const reply = await query(server, name, type);
      assert.equal([name, type, reply.rcode, reply.answers, reply.authority], [name, type, 'NOERROR', [], ['SOA']]);
    }
  }
  assert.is(upstream.queries(), 0, 'nothing was forwarded');
});

example('a query of another class (CH, HS) for a served name is answered here, never forwarded, so no cache entry of the upstream answers it for IN clients', async ({ dns }) => {
  const server = servers[0] as CoreDns;
  upstream.resetCounts();
  for (const qclass of ['CH', 'HS'] as const) for (const name of [`api.${EXAMPLE_D}`, `api-int.${EXAMPLE_D}`, `x.apps.${EXAMPLE_D}`]) await query(server, name, 'A', { qclass });
  assert.is(upstream.queries(), 0, 'nothing was forwarded');
  assert.equal(sorted(await dns.resolve4(`api.${EXAMPLE_D}`)), ['10.0.0.10', '10.0.0.11']);
});

example("the node's /etc/hosts is not served with the node names: localhost is asked upstream like any other name", async () => {
  const server = servers[0] as CoreDns;
  upstream.resetCounts();
  const reply = await query(server, 'localhost', 'A');
  assert.equal(reply.answers, []);
  assert.is(upstream.queries('localhost', 'A'), 1);
});

example("the upstream's NXDOMAIN reaches the client as NXDOMAIN", async ({ dns }) => {
  assert.is(await errorCode(dns.resolve4('nope.example.org')), 'ENOTFOUND');
});

example.run();

/* ----------------------------------------------------------------- IPv4 only */

const v4only = suite<{ dns: Resolver }>('an IPv4-only cluster');
const V4_D = 'c1.example.com';

v4only.before(async (ctx) => {
  await setup();
  ctx.dns = await serve(
    [
      '--domain', V4_D,
      '--api-lb', '10.0.0.10', '--api-lb', '10.0.0.11', '--api-lb', '10.0.0.12',
      '--api-int-lb', '10.0.0.20',
      '--ingress-lb', '10.0.1.30',
      '--node', 'master-0=10.0.0.5',
      '--upstream', UPSTREAM,
    ],
  );
});
v4only.after(teardown);

v4only('api answers all three LB addresses', async ({ dns }) => {
  assert.equal(sorted(await dns.resolve4(`api.${V4_D}`)), ['10.0.0.10', '10.0.0.11', '10.0.0.12']);
});

v4only('AAAA for api is NODATA: the name exists, without IPv6 (not NXDOMAIN, not SERVFAIL)', async ({ dns }) => {
  assert.is(await errorCode(dns.resolve6(`api.${V4_D}`)), 'ENODATA');
});

v4only("AAAA for api and a name under apps carries the cluster's SOA, as an answer without records should", async () => {
  const server = servers[0] as CoreDns;
  for (const name of [`api.${V4_D}`, `x.apps.${V4_D}`]) {
    const reply = await query(server, name, 'AAAA');
    assert.equal([name, reply.rcode, reply.answers, reply.authority], [name, 'NOERROR', [], ['SOA']]);
  }
});

v4only('AAAA for a name under apps is NODATA', async ({ dns }) => {
  assert.is(await errorCode(dns.resolve6(`x.apps.${V4_D}`)), 'ENODATA');
});

v4only('AAAA for an IPv4-only node is NODATA', async ({ dns }) => {
  assert.is(await errorCode(dns.resolve6(`master-0.${V4_D}`)), 'ENODATA');
  assert.is(await errorCode(dns.resolve6('master-0')), 'ENODATA');
});

v4only('a node address resolves back to its names', async ({ dns }) => {
  assert.equal(sorted(await dns.reverse('10.0.0.5')), ['master-0', `master-0.${V4_D}`]);
});

v4only.run();

/* ----------------------------------------------------------------- IPv6 only */

const v6only = suite('an IPv6-only cluster');
const V6_D = 'v6.example.com';

v6only.before(async () => {
  await setup();
  await serve(['--domain', V6_D, '--api-lb', 'fd00::10', '--api-int-lb', 'fd00::20', '--ingress-lb', 'fd00::30', '--upstream', UPSTREAM]);
});
v6only.after(teardown);

v6only('ANY for a name of one family answers its records, not an empty answer', async () => {
  const server = servers[0] as CoreDns;
  for (const name of [`api.${V6_D}`, `api-int.${V6_D}`, `x.apps.${V6_D}`]) {
    const reply = await query(server, name, 'ANY');
    assert.equal([name, reply.rcode, reply.answers.map((a) => a.split(' ')[2])], [name, 'NOERROR', ['AAAA']]);
  }
});

v6only("A for a name of IPv6 only is NODATA with the cluster's SOA, never forwarded", async () => {
  const server = servers[0] as CoreDns;
  upstream.resetCounts();
  const reply = await query(server, `api-int.${V6_D}`, 'A');
  assert.equal([reply.rcode, reply.answers, reply.authority], ['NOERROR', [], ['SOA']]);
  assert.is(upstream.queries(), 0);
});

v6only.run();

/* ----------------------------------------------------------------- dual stack, and sequential upstreams */

const dual = suite<{ dns: Resolver }>('a dual-stack cluster whose first upstream does not answer');
const DS_D = 'ds.example.com';

dual.before(async (ctx) => {
  await setup();
  ctx.dns = await serve(
    [
      '--domain', DS_D,
      '--api-lb', '192.0.2.10', '--api-lb', '2001:db8::10',
      '--api-int-lb', '192.0.2.20', '--api-int-lb', '2001:db8::20',
      '--ingress-lb', '192.0.2.30', '--ingress-lb', '2001:db8::30', '--ingress-lb', '2001:db8::31',
      '--node', 'cp-0=192.0.2.5', '--node', 'cp-0=2001:db8::5', '--node', 'cp-1=2001:db8::6',
      // Nothing listens on 127.0.0.2 at the upstream's port: forward must move on to the upstream.
      '--upstream', '127.0.0.2:', '--upstream', UPSTREAM,
    ],
  );
});
dual.after(teardown);

dual('every name answers both families', async ({ dns }) => {
  assert.equal(await dns.resolve4(`api.${DS_D}`), ['192.0.2.10']);
  assert.equal(await dns.resolve6(`api.${DS_D}`), ['2001:db8::10']);
  assert.equal(await dns.resolve4(`api-int.${DS_D}`), ['192.0.2.20']);
  assert.equal(await dns.resolve6(`api-int.${DS_D}`), ['2001:db8::20']);
  assert.equal(await dns.resolve4(`x.apps.${DS_D}`), ['192.0.2.30']);
  assert.equal(sorted(await dns.resolve6(`x.apps.${DS_D}`)), ['2001:db8::30', '2001:db8::31']);
});

dual('a dual-stack node answers both families', async ({ dns }) => {
  assert.equal(await dns.resolve4(`cp-0.${DS_D}`), ['192.0.2.5']);
  assert.equal(await dns.resolve6('cp-0'), ['2001:db8::5']);
});

dual('A for an IPv6-only node is NODATA', async ({ dns }) => {
  assert.is(await errorCode(dns.resolve4('cp-1')), 'ENODATA');
  assert.equal(await dns.resolve6('cp-1'), ['2001:db8::6']);
});

dual('policy sequential: an upstream that does not answer is passed over for the next', async ({ dns }) => {
  assert.equal(await dns.resolve4('www.example.org'), ['192.0.2.99']);
});

dual.run();

/* ----------------------------------------------------------------- bootstrap */

const bootstrap = suite<{ dns: Resolver }>('a bootstrap node');
const BS_D = 'c2.example.com';

bootstrap.before(async (ctx) => {
  await setup();
  ctx.dns = await serve(
    [
      '--role', 'bootstrap',
      '--domain', BS_D,
      '--api-int-lb', '10.0.0.20',
      '--ingress-lb', '10.0.1.30',
      '--upstream', UPSTREAM,
    ],
  );
});
bootstrap.after(teardown);

bootstrap('api-int answers the internal LB', async ({ dns }) => {
  assert.equal(await dns.resolve4(`api-int.${BS_D}`), ['10.0.0.20']);
});

bootstrap('api is what the upstream says, not the LB', async ({ dns }) => {
  assert.equal(await dns.resolve4(`api.${BS_D}`), ['192.0.2.88']);
});

bootstrap('names under apps answer the ingress LB once it is known (design step 10)', async ({ dns }) => {
  assert.equal(await dns.resolve4(`console-openshift-console.apps.${BS_D}`), ['10.0.1.30']);
});

bootstrap.run();

/* ----------------------------------------------------------------- apps-only (BYO DNS) */

const appsOnly = suite<{ dns: Resolver }>('an apps-only node (the admin\'s DNS serves api and api-int)');

appsOnly.before(async (ctx) => {
  await setup();
  upstream.set(`api-int.${BS_D}`, { A: ['192.0.2.89'] });
  ctx.dns = await serve(['--role', 'apps-only', '--domain', BS_D, '--ingress-lb', '10.0.1.30', '--upstream', UPSTREAM]);
});
appsOnly.after(teardown);

appsOnly('names under apps answer the ingress LB', async ({ dns }) => {
  assert.equal(await dns.resolve4(`x.apps.${BS_D}`), ['10.0.1.30']);
});

appsOnly('api and api-int are what the upstream says', async ({ dns }) => {
  assert.equal(await dns.resolve4(`api.${BS_D}`), ['192.0.2.88']);
  assert.equal(await dns.resolve4(`api-int.${BS_D}`), ['192.0.2.89']);
});

appsOnly.run();

/* ----------------------------------------------------------------- a private cluster */

const privateCluster = suite<{ dns: Resolver }>('a private cluster (no external API LB)');

privateCluster.before(async (ctx) => {
  await setup();
  ctx.dns = await serve(['--domain', BS_D, '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--upstream', UPSTREAM]);
});
privateCluster.after(teardown);

privateCluster('api is answered by the internal API LB, as api-int; apps by the ingress LB; nothing goes upstream', async ({ dns }) => {
  assert.equal(await dns.resolve4(`api-int.${BS_D}`), ['10.0.0.20']);
  assert.equal(await dns.resolve4(`x.apps.${BS_D}`), ['10.0.1.30']);
  assert.equal(await dns.resolve4(`api.${BS_D}`), ['10.0.0.20']);
});

privateCluster.run();
