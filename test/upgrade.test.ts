/**
 * A new lbdns taking over a node where an older one wrote the Corefile: real CoreDNS serves
 * the old file until the new one replaces it, and a client asking all the while is answered
 * every time. A previous release's Corefile differs from this one's in two ways (it had no
 * `template ANY ANY` block per name, so other query types went upstream, and its blocks were of
 * class IN); it is made here from this version's output, with those blocks taken out and IN put
 * back.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { API_INT_IP, DOMAIN, sleep, startCluster, startMonitor, until, UPSTREAM } from './support/cluster-fixture.js';
import { query, servableFlags, startCoreDns, type CoreDns } from './support/coredns.js';
import { runLbdns } from './support/run-cli.js';

/** This version's Corefile as a previous release wrote it: no `template ANY ANY` blocks, class IN, `hosts` of /etc/hosts. */
function previousRelease(corefile: string): string {
  return corefile.replace(/^ {4}template ANY ANY \S+ \{\n(?: {8}.*\n)*? {4}\}\n/gm, '').replace(/^( {4}template) ANY (A|AAAA) /gm, '$1 IN $2 ').replace(/^ {4}hosts \/dev\/null \{$/m, '    hosts {');
}

test("a new monitor takes over the previous release's Corefile: CoreDNS answers api-int throughout, then serves the new format", async () => {
  const cluster = await startCluster();
  const flags = await servableFlags();
  let dns: CoreDns | undefined;
  let monitor: Awaited<ReturnType<typeof startMonitor>> | undefined;
  try {
    const listen = ['--listen', flags.listen, '--health-port', flags.healthPort, '--ready-port', flags.readyPort];
    const r = await runLbdns(['render-corefile', cluster.kubeconfig, '--out', cluster.out, '--upstream', UPSTREAM, ...listen]);
    assert.is(r.code, 0, r.stderr);
    const old = previousRelease(await readFile(cluster.out, 'utf8'));
    assert.not.match(old, 'template ANY');
    await writeFile(cluster.out, old);
    dns = await startCoreDns(cluster.out, { port: flags.port });
    const server = dns;
    assert.equal((await query(server, `api-int.${DOMAIN}`, 'A')).answers.map((a) => a.split(' ').at(-1)), [API_INT_IP], 'the old file is served');

    let asking = true;
    const missed: string[] = [];
    let asked = 0;
    const client = (async () => {
      while (asking) {
        const reply = await query(server, `api-int.${DOMAIN}`, 'A').catch((err: Error) => ({ rcode: err.message, answers: [] as string[] }));
        asked += 1;
        if (reply.rcode !== 'NOERROR' || !reply.answers.some((a) => a.endsWith(` A ${API_INT_IP}`))) missed.push(`${reply.rcode} ${reply.answers.join(', ')}`);
        await sleep(20);
      }
    })();
    monitor = await startMonitor(cluster, { flags: { upstreams: [UPSTREAM], listen: flags.listen, healthPort: flags.healthPort, readyPort: flags.readyPort } });
    await until('the new Corefile on disk', async () => (await readFile(cluster.out, 'utf8')).includes('template ANY ANY'));
    await until('CoreDNS reloaded it', () => server.reloads() >= 1, 10_000);
    await sleep(500);
    asking = false;
    await client;
    assert.equal(missed, [], `every one of ${asked} queries answered api-int`);
    const other = await query(server, `api-int.${DOMAIN}`, 'TXT');
    assert.equal([other.rcode, other.answers], ['NOERROR', []], 'the new format answers other types itself');
  } finally {
    await monitor?.stop();
    await dns?.close();
    await cluster.close();
  }
});

test.run();
