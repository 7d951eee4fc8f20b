import { test } from 'uvu';
import { GOOD, replaced } from './support/corefile-fixture.js';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { checkCorefile, tokenize } from '../lib/render/corefile-check.js';
import { RenderError } from '../lib/errors.js';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { builtinTemplate } from '../lib/render/templates.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));

function rejects(text: string, message: RegExp): void {
  try {
    checkCorefile(text);
  } catch (err) {
    assert.instance(err, RenderError);
    assert.match((err as Error).message, message, (err as Error).message);
    return;
  }
  assert.unreachable(`expected the check to refuse:\n${text}`);
}

test('accepts the Corefile the built-in template renders for the example cluster', () => {
  const spec = specFromConfig(EXAMPLE_CONFIG, EXAMPLE_CONFIG.upstreams ?? []);
  const text = renderCorefile(buildRecordSet(spec, new Map()).recordSet, builtinTemplate(), 'builtin');
  checkCorefile(text);
});

test('accepts every golden Corefile', async () => {
  const goldens = (await readdir(GOLDEN_DIR)).filter((f) => f.endsWith('.Corefile'));
  assert.ok(goldens.length >= 5);
  for (const name of goldens) checkCorefile(await readFile(`${GOLDEN_DIR}${name}`, 'utf8'));
});

test('accepts the small fixture the other tests break', () => {
  checkCorefile(GOOD);
});

test('accepts a server block on another port, bound to one address', () => {
  checkCorefile(GOOD.replace(/^\. \{\n/m, '.:5353 {\n    bind 127.0.0.1\n'));
});

test('rejects a server block key whose port is out of range', () => {
  rejects(GOOD.replace(/^\. \{\n/m, '.:65536 {\n'), /server block key ".:65536" is not ZONE or ZONE:PORT/);
});

test('rejects bind to something that is not an IP address', () => {
  rejects(GOOD.replace(/^\. \{\n/m, '. {\n    bind eth0\n'), /bind "eth0" is not an IP address/);
});

test('rejects a block that is never closed', () => {
  rejects(GOOD.replace(/}\n$/, ''), /line 1: server block is never closed/);
});

test('rejects a closing brace with no block to close', () => {
  rejects(`${GOOD}}\n`, /line 24: expected a server block "KEY \{", found "\}"/);
});

test('rejects an AAAA answer in an A block', () => {
  rejects(replaced('IN A 10.0.0.10', 'IN AAAA fd00::10'), /line 5: answer .* is a AAAA record inside a template for A/);
});

test('rejects an A answer in an AAAA block', () => {
  rejects(replaced('IN AAAA fd00::10', 'IN A 10.0.0.10'), /line 10: answer .* is a A record inside a template for AAAA/);
});

test('rejects a v4 answer whose address is not an IP', () => {
  rejects(replaced('IN A 10.0.0.10', 'IN A 10.0.0.256'), /line 5: answer .* has "10\.0\.0\.256", not an IPv4 address/);
});

test('rejects a v4 answer with a leading-zero address', () => {
  rejects(replaced('IN A 10.0.0.10', 'IN A 10.0.0.010'), /has "10\.0\.0\.010", not an IPv4 address/);
});

test('rejects an answer that is not a five-field record', () => {
  rejects(replaced('"{{ .Name }} 60 IN A 10.0.0.10"', '"{{ .Name }} IN A 10.0.0.10"'), /is not "NAME TTL CLASS TYPE DATA"/);
});

test('rejects an answer with a template action other than {{ .Name }}', () => {
  rejects(replaced('{{ .Name }} 60 IN A', '{{ .Remote }} 60 IN A'), /uses a template action other than \{\{ \.Name \}\}/);
});

test('accepts {{ index .Match 1 }} in an answer when the match regex captures a group', () => {
  checkCorefile(replaced('match ^api\\.c1\\.example\\.com\\.$\n        answer "{{ .Name }} 60 IN A 10.0.0.10"', 'match ^api\\.(c1\\.example\\.com\\.)$\n        answer "{{ .Name }} 60 IN CNAME leaf.{{ index .Match 1 }}"'));
});

test('rejects {{ index .Match 1 }} when the match regex captures nothing: Go\'s template fails and the query gets SERVFAIL', () => {
  rejects(replaced('"{{ .Name }} 60 IN A 10.0.0.10"', '"{{ .Name }} 60 IN CNAME leaf.{{ index .Match 1 }}"'), /line 5: template: an answer uses \{\{ index \.Match 1 \}\}, but a match regex of the block has only 0 capturing groups/);
});

test('rejects an unterminated quoted string', () => {
  rejects(replaced('    cache 30\n', '    cache 30 "unterminated\n'), /line 21: unterminated quoted string/);
});

test('rejects more than 15 forward upstreams', () => {
  const sixteen = Array.from({ length: 16 }, (_, i) => `10.9.0.${i + 1}`).join(' ');
  rejects(replaced('forward . 10.0.0.2 10.0.0.3', `forward . ${sixteen}`), /line 18: forward has 16 upstreams, CoreDNS accepts at most 15/);
});

test('accepts exactly 15 forward upstreams', () => {
  const fifteen = Array.from({ length: 15 }, (_, i) => `10.9.0.${i + 1}`).join(' ');
  checkCorefile(replaced('forward . 10.0.0.2 10.0.0.3', `forward . ${fifteen}`));
});

test('rejects a forward upstream that is not an IP', () => {
  rejects(replaced('forward . 10.0.0.2 10.0.0.3', 'forward . dns.example.net'), /forward upstream "dns\.example\.net" is not an IP address/);
});

test('rejects a reload interval of 1s', () => {
  rejects(replaced('reload 2s 1s', 'reload 1s'), /line 22: reload interval "1s" must be at least 2s/);
});

test('rejects a reload jitter of 0s', () => {
  rejects(replaced('reload 2s 1s', 'reload 2s 0s'), /reload jitter "0s" must be at least 1s/);
});

test('rejects a hosts entry whose address is not an IP', () => {
  rejects(replaced('10.0.0.5 master-0', '10.0.0.500 master-0'), /line 14: hosts entry "10\.0\.0\.500" is not an IP address/);
});

test('rejects a hosts entry without a name', () => {
  rejects(replaced('10.0.0.5 master-0 master-0.c1.example.com', '10.0.0.5'), /hosts entry for 10\.0\.0\.5 has no name/);
});

test('rejects a hosts ttl CoreDNS refuses (over 65535)', () => {
  rejects(replaced('        ttl 60\n', '        ttl 65536\n'), /hosts ttl "65536" must be a whole number from 1 to 65535/);
});

test('accepts an SOA as a template authority, and rejects an authority that is not one', () => {
  const soa = 'c1.example.com. 30 IN SOA ns.lbdns.invalid. hostmaster.lbdns.invalid. 1 3600 600 86400 30';
  checkCorefile(replaced('match ^api\\.c1\\.example\\.com\\.$\n', `match ^api\\.c1\\.example\\.com\\.$\n        authority "${soa}"\n`));
  rejects(replaced('match ^api\\.c1\\.example\\.com\\.$\n', 'match ^api\\.c1\\.example\\.com\\.$\n        authority "c1.example.com. 30 IN NS ns.example.com."\n'), /template: authority "c1\.example\.com\. 30 IN NS ns\.example\.com\." is not "NAME\. TTL IN SOA/);
});

test('rejects a hosts entry after fallthrough, which CoreDNS reads as an unknown option', () => {
  rejects(replaced('        fallthrough\n    }\n    forward', '        fallthrough\n        10.0.0.6 master-1\n    }\n    forward'), /hosts entry "10\.0\.0\.6" comes after fallthrough/);
});

test('rejects a lower-case template class, which CoreDNS looks up case-sensitively', () => {
  rejects(replaced('template ANY A api', 'template in A api'), /template: invalid class "in"/);
});

test('rejects a lower-case template type, which CoreDNS looks up case-sensitively', () => {
  rejects(replaced('template ANY A api', 'template ANY a api'), /template: invalid type "a"/);
});

test('rejects a regex that does not compile', () => {
  rejects(replaced('match ^api\\.c1', 'match ^(api\\.c1'), /invalid regex/);
});

test('a quoted brace closes a block, as in CoreDNS', () => {
  // The quoted brace ends hosts and its real "}" then ends the server block: the rest no longer nests.
  rejects(replaced('        ttl 60\n', '        ttl 60\n    "}"\n'), /line 22: expected a server block "KEY \{", found "cache 30"/);
});

test('a # inside a word starts a comment, as in CoreDNS', () => {
  rejects(replaced('forward . 10.0.0.2 10.0.0.3 {', 'forward . 10.0.0.2#x 10.0.0.3 {'), /line 21: expected a server block "KEY \{", found "cache 30"/);
});

test('tokenize keeps a backslash before anything but a quote, as CoreDNS does', () => {
  const tokens = tokenize('answer "a \\"b\\" c\\\\d \\.e" # comment\nnext#comment');
  assert.equal(tokens.map((t) => t.text), ['answer', 'a "b" c\\\\d \\.e', 'next']);
  assert.equal(tokens.map((t) => t.line), [1, 1, 2]);
});

test('rejects a second hosts block in one server block, which CoreDNS refuses at setup', () => {
  rejects(replaced('    cache 30\n', '    cache 30\n    hosts {\n        10.0.0.6 master-1\n    }\n'), /line 22: a second "hosts" in the server block "\." \(the first is on line 13\): CoreDNS refuses it at setup/);
});

for (const ttl of ['0', '-5']) {
  test(`rejects cache ${ttl}, a TTL CoreDNS refuses at setup`, () => {
    rejects(replaced('    cache 30\n', `    cache ${ttl}\n`), new RegExp(`line 21: cache "${ttl}": CoreDNS refuses a TTL of 0 or less`));
  });
}

test('accepts cache with zones and no TTL, which CoreDNS reads as its default TTL', () => {
  checkCorefile(replaced('    cache 30\n', '    cache example.com\n'));
});

test('rejects a second cache, which CoreDNS refuses at setup like every plugin that may appear once', () => {
  rejects(replaced('    reload 2s 1s\n', '    reload 2s 1s\n    cache 60\n'), /line 23: a second "cache" .*this plugin can only be used once per Server Block/);
});

test('rejects a second reload, of which CoreDNS would silently ignore all but the first', () => {
  rejects(replaced('    reload 2s 1s\n', '    reload 2s 1s\n    reload 10s 5s\n'), /line 23: a second "reload" .*CoreDNS reads only the first and ignores the rest/);
});

test('accepts a second forward, which CoreDNS takes (one per zone)', () => {
  checkCorefile(replaced('    cache 30\n', '    forward example.org 10.0.0.9\n    cache 30\n'));
});

test('accepts the same once-only directive in two server blocks', () => {
  checkCorefile(`${GOOD}example.org {\n    cache 30\n    forward . 10.0.0.2\n}\n`);
});

test('rejects a misspelt directive, which makes CoreDNS refuse the whole file, and names the one meant', () => {
  rejects(replaced('template ANY AAAA', 'templat ANY AAAA'), /line 8: unknown directive "templat": CoreDNS would refuse the whole file; did you mean "template"\?/);
});

test('rejects a directive that only CoreDNS releases after 1.10.1 know', () => {
  rejects(replaced('    cache 30\n', '    cache 30\n    quic\n'), /line 22: directive "quic" is unknown to CoreDNS 1\.10\.1/);
});

test('rejects reload with three arguments', () => {
  rejects(replaced('reload 2s 1s', 'reload 2s 1s 1s'), /line 22: reload takes at most 2 arguments \(INTERVAL JITTER\), found 3/);
});

test('accepts reload 1h 1m: CoreDNS reads durations as Go does', () => {
  checkCorefile(replaced('reload 2s 1s', 'reload 1h 1m'));
});

test('accepts reload durations in every Go form: 90s, 1m30s, 2500ms, 1.5s', () => {
  for (const args of ['90s', '1m30s 1.5s', '2500ms 1s', '1h30m 90s']) checkCorefile(replaced('reload 2s 1s', `reload ${args}`));
});

test('accepts reload without arguments (CoreDNS defaults to 30s and 15s)', () => {
  checkCorefile(replaced('reload 2s 1s', 'reload'));
});

test('rejects a reload interval without a unit, which Go does not read as a duration', () => {
  rejects(replaced('reload 2s 1s', 'reload 30'), /reload interval "30" is not a duration CoreDNS reads/);
});

test('rejects a reload jitter of 500ms, a valid duration under the 1s minimum', () => {
  rejects(replaced('reload 2s 1s', 'reload 2s 500ms'), /reload jitter "500ms" must be at least 1s/);
});

test('rejects a reload interval of 1.999999999s, a nanosecond under the 2s minimum', () => {
  rejects(replaced('reload 2s 1s', 'reload 1.999999999s'), /reload interval "1\.999999999s" must be at least 2s/);
});

/** The fixture with the A block's match regex replaced. */
const withMatch = (regex: string): string => replaced('match ^api\\.c1\\.example\\.com\\.$', `match ${regex}`);

test('rejects a match regex with lookahead, which JavaScript accepts and Go (RE2) refuses', () => {
  const regex = '^(?!www\\.)api\\.';
  new RegExp(regex);
  rejects(withMatch(regex), /line 4: template: invalid regex ".*" for CoreDNS \(Go RE2 syntax\): .*RE2 has no lookahead/);
});

test('rejects a match regex with lookbehind', () => {
  rejects(withMatch('^api(?<!www)\\.'), /RE2 has no lookbehind/);
});

test('rejects a match regex with a backreference', () => {
  rejects(withMatch('^(api)\\.\\1\\.'), /invalid escape sequence \\1: RE2 has no backreferences/);
});

test('rejects a match regex with an atomic group', () => {
  rejects(withMatch('^(?>api)\\.'), /RE2 has no atomic groups/);
});

test('rejects a match regex with a possessive quantifier', () => {
  rejects(withMatch('^api.*+$'), /invalid nested repetition operator \*\+: RE2 has no possessive quantifiers/);
});

test('rejects a (?<name>...) group, which the Go that builds CoreDNS 1.10.1 does not know', () => {
  rejects(withMatch('^(?<host>api)\\.'), /write a named group as \(\?P<name>…\)/);
});

test('rejects repeat counts whose nesting multiplies beyond 1000, as Go does', () => {
  rejects(withMatch('^(a{100}){11}$'), /invalid repeat count/);
});

test('accepts Go regex syntax that a JavaScript RegExp refuses: (?i), (?P<name>...), \\pL', () => {
  for (const regex of ['(?i)^API\\.c1\\.', '^(?P<host>api)\\.', '^\\pL+\\.']) {
    assert.throws(() => new RegExp(regex, 'u'));
    checkCorefile(withMatch(regex));
  }
});

test('rejects an empty Corefile', () => {
  rejects('# nothing here\n', /Corefile has no server block/);
});

test('a file that does not parse is reported as such before a directive it holds', () => {
  rejects(replaced('    errors\n', '    erors\n').replace(/\n}\n$/, '\n'), /server block is never closed/);
});

test('what the check keeps of a Corefile does not keep the Corefile itself', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = (): number => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  // Each text 4 MB, with a regex and an answer no check has seen: 40 MB if they kept their files.
  for (let i = 0; i < 10; i++) checkCorefile(`# ${'x'.repeat(4 << 20)}\n${replaced('10.0.0.10"', `10.0.${i}.10"`).replace('^api\\.c1', `^api${i}\\.c1`)}`);
  const kept = heap() - before;
  assert.ok(kept < 8 << 20, `${(kept / 2 ** 20).toFixed(1)} MiB kept`);
});

test('a second server block of the same zone and port is refused, as CoreDNS refuses the whole file; Example.COM. and example.com are one zone', () => {
  rejects(`${GOOD}. {\n    errors\n}\n`, /server block key "\." is served already \(line 1\)/);
  rejects(`${GOOD}.:53 {\n    errors\n}\n`, /server block key "\.:53" is served already \(line 1\)/);
  rejects('example.com:5353 {\n    errors\n}\nExample.COM.:5353 {\n    errors\n}\n', /server block key "Example\.COM\.:5353" is served already/);
});

test('server blocks of one zone and port bound to different addresses are accepted', () => {
  checkCorefile('.:5353 {\n    bind 127.0.0.1\n    errors\n}\n.:5353 {\n    bind 127.0.0.2\n    errors\n}\n');
});

test('rejects a CNAME target with a label past 63 characters: CoreDNS would SERVFAIL every query the block answers', () => {
  rejects(replaced('"{{ .Name }} 60 IN A 10.0.0.10"', `"{{ .Name }} 60 IN CNAME ${'a'.repeat(64)}.example.com."`), /has CNAME target .* \(of at most 253 characters, 63 a label\)/);
});

test('server blocks of one zone and port are accepted when one filters its queries with view, as CoreDNS accepts them', () => {
  checkCorefile(".:5353 {\n    view internal {\n        expr incidr(client_ip(), '10.0.0.0/8')\n    }\n    forward . 10.0.0.1\n}\n.:5353 {\n    forward . 10.0.0.2\n}\n");
});

test.run();
