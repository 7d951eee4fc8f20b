/**
 * The structural Corefile check held against real CoreDNS (make peers): every golden Corefile
 * the check passes, CoreDNS loads and answers from; every broken Corefile below, which the
 * check refuses, CoreDNS refuses to load too, or loads as something else than written (a stray
 * closing brace becomes a server block for the zone "}." on port 53). (Refusals of what CoreDNS loads but then serves
 * wrong, such as an AAAA answer in an A template, are held to their answers in
 * corefile-answers.test.ts and template checks elsewhere.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCorefile } from '../lib/render/corefile-check.js';
import { RenderError } from '../lib/errors.js';
import { freePort, peerBinary, startPeer, waitForOutput } from './support/peers.js';
import { query } from './support/coredns.js';
import { startDnsServer } from './support/dns-server.js';
import { GOOD, replaced } from './support/corefile-fixture.js';

const GOLDEN = new URL('./golden/', import.meta.url);

/** The ports a Corefile names, moved to free loopback ones: goldens listen on :53, :18080 and :18181. */
async function onFreePorts(corefile: string): Promise<{ text: string; port: number }> {
  const [port, health, ready] = await Promise.all([freePort(), freePort(), freePort()]);
  const text = corefile
    .replace(/^(\S*?):(53|5353)( \{)$/gm, `$1:${port}$3`)
    .replace(/^\. \{$/gm, `.:${port} {`)
    .replace(/^( +health) \S+$/gm, `$1 127.0.0.1:${health}`)
    .replace(/^( +ready) \S+$/gm, `$1 127.0.0.1:${ready}`)
    .replace(/^( +bind) .*$/gm, '$1 127.0.0.1');
  return { text, port };
}

/** Starts CoreDNS on `text`: 'loaded' once it serves (with what it printed), else what it said when it exited. */
async function load(text: string, ask?: (port: number) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-check-coredns-'));
  const { text: moved, port } = await onFreePorts(text);
  const path = join(dir, 'Corefile');
  await writeFile(path, moved);
  const peer = startPeer(peerBinary('coredns'), ['-conf', path], { cwd: dir });
  try {
    const outcome = await Promise.race([
      waitForOutput(peer, 'CoreDNS', (out) => /CoreDNS-\d+\.\d+\.\d+/.test(out), 15_000).then(() => 'loaded'),
      peer.exited.then(() => `exited: ${peer.output().trim().split('\n').at(-1) ?? ''}`),
    ]);
    if (outcome === 'loaded' && ask) await ask(port);
    return outcome === 'loaded' ? `loaded: ${peer.output()}` : outcome;
  } finally {
    await peer.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

test('every golden Corefile the check passes, real CoreDNS loads and answers from', async () => {
  const files = (await readdir(GOLDEN)).filter((f) => f.endsWith('.Corefile'));
  assert.ok(files.length >= 8, files.join(', '));
  // The goldens' upstreams are documentation addresses: CoreDNS asks a test server on loopback instead.
  const upstream = await startDnsServer();
  try {
    upstream.set('lbdns-check.example.org', { A: ['192.0.2.7'] });
    for (const file of files) {
      const text = await readFile(new URL(file, GOLDEN), 'utf8');
      checkCorefile(text);
      const onLoopback = text.replace(/^( +forward \.) [^{\n]+?( \{)?$/gm, `$1 ${upstream.address}$2`);
      assert.ok(!/^ +forward \. (?!127\.0\.0\.1:)/m.test(onLoopback), `${file}: every forward goes to the test upstream`);
      const outcome = await load(onLoopback, async (port) => {
        const reply = await query({ host: '127.0.0.1', port }, 'lbdns-check.example.org', 'A');
        assert.equal([reply.rcode, reply.answers.map((a) => a.replace(/ \d+ /, ' '))], ['NOERROR', ['lbdns-check.example.org A 192.0.2.7']], `${file}: CoreDNS answers`);
      });
      assert.match(outcome, /^loaded: /, file);
    }
  } finally {
    await upstream.close();
  }
});

/** `misread`: what CoreDNS printed when it loaded the file as something else than written. */
const CASES: readonly { readonly what: string; readonly text: string; readonly misread?: RegExp }[] = [
  { what: 'a block that is never closed', text: GOOD.replace(/\}\n$/, '') },
  { what: 'a closing brace with no block to close', text: `${GOOD}}\n`, misread: /^\}\.:53$/m },
  { what: 'an unterminated quoted string', text: replaced('    cache 30\n', '    cache 30 "unterminated\n') },
  { what: '16 forward upstreams', text: replaced('forward . 10.0.0.2 10.0.0.3', `forward . ${Array.from({ length: 16 }, (_, i) => `10.9.0.${i + 1}`).join(' ')}`) },
  { what: 'a reload interval of 1s', text: replaced('reload 2s 1s', 'reload 1s') },
  { what: 'a reload jitter of 0s', text: replaced('reload 2s 1s', 'reload 2s 0s') },
  { what: 'a hosts ttl over 65535', text: replaced('        ttl 60\n', '        ttl 65536\n') },
  { what: 'a hosts entry after fallthrough', text: replaced('        fallthrough\n    }\n    forward', '        fallthrough\n        10.0.0.6 master-1\n    }\n    forward') },
  { what: 'a lower-case template class', text: replaced('template ANY A api', 'template in A api') },
  { what: 'a regex that does not compile', text: replaced('match ^api\\.c1', 'match ^(api\\.c1') },
  { what: 'a second hosts block in one server block', text: replaced('    cache 30\n', '    cache 30\n    hosts {\n        10.0.0.6 master-1\n    }\n') },
  { what: 'a second cache', text: replaced('    cache 30\n', '    cache 30\n    cache 60\n') },
  { what: 'a cache TTL of 0', text: replaced('    cache 30\n', '    cache 0\n') },
  { what: 'a misspelt directive', text: replaced('    cache 30\n', '    cahce 30\n') },
  { what: 'a second server block for the same zone and port', text: `${GOOD}. {\n    errors\n}\n` },
  { what: 'a server block key with a label of 64 characters', text: `${GOOD}${'a'.repeat(64)}.test {\n    errors\n}\n` },
  { what: 'a forward policy CoreDNS does not know', text: replaced('        policy sequential\n', '        policy bogus\n') },
  { what: 'a forward max_fails that is not a whole number', text: replaced('        policy sequential\n', '        max_fails -1\n') },
  { what: 'a forward zone that is not a DNS name', text: replaced('forward . 10.0.0.2 10.0.0.3', 'forward bad..zone 10.0.0.2') },
  { what: 'a hosts reload that is not a duration', text: replaced('        ttl 60\n', '        ttl 60\n        reload bogus\n') },
];

for (const c of CASES) {
  test(`${c.what}: the check refuses it, and real CoreDNS ${c.misread ? 'misreads' : 'refuses'} it`, async () => {
    assert.throws(() => checkCorefile(c.text), (err: unknown) => err instanceof RenderError);
    const outcome = await load(c.text);
    if (c.misread) assert.match(outcome, c.misread, `CoreDNS: ${outcome}`);
    else assert.match(outcome, /^exited: /, `CoreDNS ${outcome} this Corefile:\n${c.text}`);
  });
}

test.run();
