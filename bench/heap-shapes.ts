/**
 * Bytes of heap per value for the ways lbdns could build the values it keeps 25,000 of (the
 * Gateway names' match strings, address and chain arrays, endpoints): the figures behind the
 * choices in lib/resolve/specificity.ts, lib/grammar/ip.ts, lib/resolve/gateway-names.ts and
 * lib/sources/gateway-endpoints.ts. `node --expose-gc --import tsx bench/heap-shapes.ts`.
 */
const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined) throw new Error('run with node --expose-gc');
const gc: () => void = maybeGc;

const N = 25_000;
const names = Array.from({ length: N }, (_, i) => `h${i % 50}.g${i}.gw.example.net`);
const hop = { owner: 'a', target: 'b', ttl: 60 };
const rest = [hop, hop];
// Every result stays reachable, so that no measurement frees another's.
const kept: unknown[] = [];

function perValue(make: (name: string) => unknown): number {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const values = names.map(make);
  gc();
  gc();
  kept.push(values);
  // Less the array holding the values.
  return (process.memoryUsage().heapUsed - before) / N - 8;
}

const rows: [string, (name: string) => unknown][] = [
  ['match string: template with replaceAll', (n) => `^${n.replaceAll('.', '\\.')}\\.$`],
  ['match string: split and join', (n) => `^${n}.$`.split('.').join('\\.')],
  ['one address: [] then push', () => {
    const a: string[] = [];
    a.push('10.0.0.1');
    return a;
  }],
  ['one address: pushed, then slice', () => {
    const a: string[] = [];
    a.push('10.0.0.1');
    return a.slice();
  }],
  ['chain of three: [hop, ...rest]', () => [hop, ...rest]],
  ['chain of three: [hop].concat(rest)', () => [hop].concat(rest)],
  ['endpoint: spread of a base', (n) => {
    const base = { dnsName: n, ttl: 60, setIdentifier: '' };
    return { ...base, recordType: 'A', targets: names };
  }],
  ['endpoint: object literal', (n) => ({ dnsName: n, ttl: 60, setIdentifier: '', recordType: 'A', targets: names })],
];
for (const [what, make] of rows) process.stdout.write(`${what.padEnd(40)} ${perValue(make).toFixed(0).padStart(5)} B\n`);
