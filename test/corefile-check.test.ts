import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { checkCorefile, tokenize } from '../lib/corefile-check.js';
import { RenderError } from '../lib/errors.js';
import { EXAMPLE_CONFIG } from '../lib/example.js';
import { buildRecordSet } from '../lib/record-set.js';
import { renderCorefile } from '../lib/render.js';
import { specFromConfig } from '../lib/spec.js';
import { builtinTemplate } from '../lib/templates.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));

/** A small Corefile in the shipped shape; each test breaks one thing in it. */
const GOOD = `. {
    errors
    template IN A api.c1.example.com {
        match ^api\\.c1\\.example\\.com\\.$
        answer "{{ .Name }} 60 IN A 10.0.0.10"
        fallthrough
    }
    template IN AAAA api.c1.example.com {
        match ^api\\.c1\\.example\\.com\\.$
        answer "{{ .Name }} 60 IN AAAA fd00::10"
        fallthrough
    }
    hosts {
        10.0.0.5 master-0 master-0.c1.example.com
        ttl 60
        fallthrough
    }
    forward . 10.0.0.2 10.0.0.3 {
        policy sequential
    }
    cache 30
    reload 2s 1s
}
`;

function replaced(from: string, to: string): string {
  assert.ok(GOOD.includes(from), `fixture contains ${JSON.stringify(from)}`);
  return GOOD.replace(from, to);
}

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

test('rejects a hosts entry after fallthrough, which CoreDNS reads as an unknown option', () => {
  rejects(replaced('        fallthrough\n    }\n    forward', '        fallthrough\n        10.0.0.6 master-1\n    }\n    forward'), /hosts entry "10\.0\.0\.6" comes after fallthrough/);
});

test('rejects a lower-case template class, which CoreDNS looks up case-sensitively', () => {
  rejects(replaced('template IN A api', 'template in A api'), /template: invalid class "in"/);
});

test('rejects a lower-case template type, which CoreDNS looks up case-sensitively', () => {
  rejects(replaced('template IN A api', 'template IN a api'), /template: invalid type "a"/);
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

test('rejects an empty Corefile', () => {
  rejects('# nothing here\n', /Corefile has no server block/);
});

test.run();
