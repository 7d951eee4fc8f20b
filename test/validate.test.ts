import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidationError } from '../lib/errors.js';
import { canonicalIp, compareIps, isLocalOnlyIp, sortUniqueIps, splitFamilies } from '../lib/grammar/ip.js';
import { parseDurationMs } from '../lib/grammar/go-duration.js';
import {
  parseEndpoint,
  parseEndpoints,
  validateDnsName,
  validateDomain,
  validateIp,
  validateReload,
  validateTtl,
} from '../lib/grammar/validate.js';

function refuses(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ValidationError);
    assert.match((err as Error).message, message, (err as Error).message);
    return;
  }
  assert.unreachable(`expected a ValidationError matching ${message}`);
}

test('canonicalIp writes IPv6 in RFC 5952 form: lower case, longest zero run compressed', () => {
  assert.is(canonicalIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  assert.is(canonicalIp('fd00:0:0:1:0:0:0:1'), 'fd00:0:0:1::1');
  assert.is(canonicalIp('::1'), '::1');
  assert.is(canonicalIp('::'), '::');
});

test('canonicalIp keeps a plain dotted quad as it is', () => {
  assert.is(canonicalIp('10.0.0.1'), '10.0.0.1');
  assert.is(canonicalIp('0.0.0.0'), '0.0.0.0');
});

test('canonicalIp refuses an IPv4 octet with a leading zero (octal or decimal?)', () => {
  assert.is(canonicalIp('10.0.0.01'), null);
  assert.is(canonicalIp('010.0.0.1'), null);
});

test('canonicalIp refuses IPv4-mapped IPv6 in either spelling', () => {
  assert.is(canonicalIp('::ffff:10.0.0.1'), null);
  assert.is(canonicalIp('::ffff:a00:1'), null);
});

test('canonicalIp refuses zone ids, prefixes, ports, brackets and surrounding space', () => {
  for (const text of ['fe80::1%eth0', '10.0.0.0/8', 'fd00::/64', '10.0.0.1:53', '[fd00::1]', '[fd00::1]:53', ' 10.0.0.1', '10.0.0.1 ', '']) {
    assert.is(canonicalIp(text), null, text);
  }
});

test('canonicalIp refuses what node:net refuses', () => {
  for (const text of ['10.0.0.256', '10.0.0', '10.0.0.1.1', '1e0::g', 'fd00:::1', '0x0a.0.0.1']) assert.is(canonicalIp(text), null, text);
});

test('IPs sort v4 before v6, each numerically', () => {
  assert.equal(sortUniqueIps(['fd00::10', '10.0.0.10', 'fd00::9', '9.0.0.1', '10.0.0.9', '10.0.0.10']), ['9.0.0.1', '10.0.0.9', '10.0.0.10', 'fd00::9', 'fd00::10']);
  assert.ok(compareIps('::ffff:0:1', '10.0.0.1') > 0);
});

test('splitFamilies separates v4 and v6', () => {
  assert.equal(splitFamilies(['fd00::1', '10.0.0.1']), { v4: ['10.0.0.1'], v6: ['fd00::1'] });
});

test('loopback, link-local and unspecified addresses are local-only', () => {
  for (const a of ['127.0.0.1', '127.0.0.53', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', 'febf::1']) assert.ok(isLocalOnlyIp(a), a);
});

test('routable addresses are not local-only', () => {
  for (const a of ['10.0.0.2', '192.0.2.53', '2001:db8::53', 'fd00::53', 'fec0::1', '128.0.0.1']) assert.not.ok(isLocalOnlyIp(a), a);
});

test('validateIp names the field and the value, and says what it takes', () => {
  refuses(() => validateIp('--upstream', '10.0.0.1:53'), /^--upstream: "10\.0\.0\.1:53" is not a valid IP address; give a plain IPv4 or IPv6 literal/);
});

test('validateIp refuses a value that is not a string', () => {
  refuses(() => validateIp('upstreams', 53), /upstreams: 53 is not a string/);
});

test('a DNS name is lower-cased and loses its trailing dot', () => {
  assert.is(validateDnsName('f', 'LB.Example.NET.'), 'lb.example.net');
});

test('a label may be 63 characters, not 64', () => {
  assert.is(validateDnsName('f', `${'a'.repeat(63)}.net`), `${'a'.repeat(63)}.net`);
  refuses(() => validateDnsName('f', `${'a'.repeat(64)}.net`), /has an invalid label/);
});

test('a name may be 253 characters, not 254', () => {
  const name = (length: number) => `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 3 * 64)}`;
  assert.is(validateDnsName('f', name(253)).length, 253);
  refuses(() => validateDnsName('f', name(254)), /is longer than 253 characters/);
});

test('a label may not start or end with a hyphen', () => {
  refuses(() => validateDnsName('f', '-lb.example.net'), /has an invalid label "-lb"/);
  refuses(() => validateDnsName('f', 'lb-.example.net'), /has an invalid label "lb-"/);
});

test('an empty label is refused', () => {
  refuses(() => validateDnsName('f', 'lb..example.net'), /has an empty label/);
  refuses(() => validateDnsName('f', '.'), /is empty/);
});

test('no Corefile syntax survives name validation', () => {
  for (const bad of ['a{b.net', 'a}b.net', 'a"b.net', "a'b.net", 'a b.net', 'a\nb.net', 'a\tb.net', 'a#b.net', 'a;b.net', '{{.Name}}.net', 'a\\b.net', 'a/b.net', 'a_b.net']) {
    refuses(() => validateDnsName('f', bad), /has an invalid label/);
  }
  refuses(() => validateDnsName('f', 'ä.net'), /has the non-ASCII character U\+00E4/);
});

test('a non-ASCII letter is refused before lower-casing could make it ASCII (U+212A KELVIN SIGN)', () => {
  refuses(() => validateDnsName('f', 'wor\u212Aer-0.example.net'), /has the non-ASCII character U\+212A/);
});

test('an xn-- label must be valid Punycode; a valid one is kept as written', () => {
  refuses(() => validateDnsName('f', 'xn--wi.example.test'), /has the label "xn--wi", which is not valid Punycode/);
  assert.is(validateDnsName('f', 'xn--bcher-kva.example.test'), 'xn--bcher-kva.example.test');
});

test('a wildcard is accepted only where asked for, and only as the first label', () => {
  assert.is(validateDnsName('f', '*.apps.c1.example.com', { allowWildcard: true }), '*.apps.c1.example.com');
  refuses(() => validateDnsName('f', '*.apps.c1.example.com'), /has an invalid label "\*"/);
  refuses(() => validateDnsName('f', 'a.*.example.com', { allowWildcard: true }), /has an invalid label "\*"/);
});

test('a name ending in an all-numeric label is refused as a mistyped address', () => {
  refuses(() => validateDnsName('f', 'lb.example.123'), /ends in an all-numeric label/);
});

test('a domain needs at least two labels', () => {
  assert.is(validateDomain('--domain', 'c1.example.com'), 'c1.example.com');
  refuses(() => validateDomain('--domain', 'cluster'), /--domain: "cluster" needs at least 2 labels/);
});

test('an endpoint that is an IP literal stays an IP, canonical', () => {
  assert.equal(parseEndpoint('f', 'FD00:0::10'), { kind: 'ip', ip: 'fd00::10' });
});

test('an endpoint that is a name becomes a hostname to resolve, lower case', () => {
  assert.equal(parseEndpoint('f', 'Router.Example.NET'), { kind: 'hostname', hostname: 'router.example.net' });
});

test('an endpoint that looks like an address, a URL or a path is refused as neither an address nor a host name, not resolved', () => {
  refuses(() => parseEndpoint('--api-lb', '10.0.0.300'), /"10\.0\.0\.300" is neither an IP address nor a host name/);
  refuses(() => parseEndpoint('--api-lb', '10.0.0.0/24'), /"10\.0\.0\.0\/24" is neither an IP address nor a host name/);
  refuses(() => parseEndpoint('--api-lb', 'fd00::1%eth0'), /is neither an IP address nor a host name/);
  refuses(() => parseEndpoint('--api-lb', 'https://lb.example.net'), /is neither an IP address nor a host name/);
});

test('an endpoint list takes 16 entries, not 17', () => {
  const ips = (n: number) => Array.from({ length: n }, (_, i) => `10.0.0.${i + 1}`);
  assert.is(parseEndpoints('--api-lb', ips(16)).length, 16);
  refuses(() => parseEndpoints('--api-lb', ips(17)), /--api-lb: 17 entries exceed the limit of 16/);
});

test('an endpoint list refuses duplicates after canonicalisation', () => {
  refuses(() => parseEndpoints('--api-lb', ['fd00::1', 'FD00:0::1']), /"fd00::1" is listed twice/);
  refuses(() => parseEndpoints('--api-lb', ['lb.example.net', 'LB.example.net.']), /"lb\.example\.net" is listed twice/);
});

test('a TTL is a whole number from 1 to 65535, the hosts plugin limit', () => {
  assert.is(validateTtl('--ttl', 1), 1);
  assert.is(validateTtl('--ttl', '65535'), 65535);
  for (const bad of [0, 65536, '0', '65536', '1.5', '-1', ' 60', '60s', 'abc', '', 1.5, null]) {
    refuses(() => validateTtl('--ttl', bad), /^--ttl: .* is not a whole number from 1 to 65535/);
  }
});

test('durations take Go\'s grammar, as CoreDNS and Kubernetes write them', () => {
  assert.is(parseDurationMs('f', '1m30s', 1000, 3_600_000), 90_000);
  assert.is(parseDurationMs('f', '1.5s', 1000, 3_600_000), 1500);
  assert.is(parseDurationMs('f', '500ms', 100, 3_600_000), 500);
  assert.is(parseDurationMs('f', '1h', 1000, 3_600_000), 3_600_000);
  assert.is(parseDurationMs('f', '2m', 1000, 3_600_000), 120_000);
});

test('a duration may also be whole seconds, as a number or a string', () => {
  assert.is(parseDurationMs('f', 5, 1000, 3_600_000), 5000);
  assert.is(parseDurationMs('f', '5', 1000, 3_600_000), 5000);
});

test('a text Go does not read as a duration is refused', () => {
  for (const bad of ['s', '', ' 5s', '5S', '1d', '1.5', '5 s', '1m30', 1.5]) refuses(() => parseDurationMs('--reload-interval', bad, 2000, 3_600_000), /is not a duration/);
});

test('a duration out of range is reported as given', () => {
  refuses(() => parseDurationMs('--reload-interval', '1s', 2000, 3_600_000), /^--reload-interval: "1s" is not from 2s to 3600s/);
  refuses(() => parseDurationMs('--reload-interval', '61m', 2000, 3_600_000), /"61m" is not from 2s to 3600s/);
  refuses(() => parseDurationMs('--timeout', '20ms', 50, 60_000), /"20ms" is not from 50ms to 60s/);
});

test('reload settings take Go durations', () => {
  assert.equal(validateReload('1m30s', '45s'), { intervalSeconds: 90, jitterSeconds: 45 });
});

test('reload settings default-like values pass', () => {
  assert.equal(validateReload(2, 1), { intervalSeconds: 2, jitterSeconds: 1 });
  assert.equal(validateReload('1m', '30s'), { intervalSeconds: 60, jitterSeconds: 30 });
});

test('a reload interval under 2s or a jitter under 1s is refused, as CoreDNS would', () => {
  refuses(() => validateReload('1s', '1s'), /--reload-interval: "1s"/);
  refuses(() => validateReload('2s', '0'), /--reload-jitter: "0"/);
});

test('a reload jitter over half the interval is refused', () => {
  refuses(() => validateReload('4s', '3s'), /--reload-jitter: "3s" is more than half the interval \(4s\)/);
});

test.run();
