// Builds dist/lbdns.mjs: one ESM file that runs with plain `node`, templates embedded.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { CLIPANION_CORE, patchClipanionCore } from './clipanion-patch.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const templates = Object.fromEntries(
  readdirSync(`${root}templates`)
    .filter((f) => f.endsWith('.eta'))
    .map((f) => [f, readFileSync(`${root}templates/${f}`, 'utf8')]),
);

/*
 * What only the cluster commands load, each through a dynamic import(): the Kubernetes
 * client (through the module naming the part of it lbdns uses) and prom-client. Bundled like
 * the rest, V8 would parse all of it on every start, local renders included, which was most
 * of a cold start. So each is built on its own as CommonJS and embedded gzipped, and its
 * import() unpacks and compiles it on first use.
 */
const LAZY = new Set([`${root}lib/kube/api.ts`, 'prom-client']);
/** Each lazy part, gzipped and base64-encoded, by name. */
const payloads = new Map();

/*
 * node-fetch 2 (the client's HTTP layer) uses Node's own URL and falls back to the
 * whatwg-url package only where there is none, yet loads it, and with it tr46's Unicode
 * tables: 290 kB of code and a megabyte of heap for nothing. Node 20 always has URL.
 */
const nodeHasUrl = {
  name: 'node-has-url',
  setup(b) {
    b.onResolve({ filter: /^whatwg-url$/ }, () => ({ path: 'whatwg-url', namespace: 'node-has-url' }));
    b.onLoad({ filter: /.*/, namespace: 'node-has-url' }, () => ({ contents: 'module.exports = { URL };', loader: 'js' }));
  },
};

/** Minified CommonJS for Node 20, kept in memory: how both the app and its lazy parts are built. */
const CJS_IN_MEMORY = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', minify: true, write: false, logLevel: 'warning' };

async function lazyModule(entry) {
  const { outputFiles } = await build({
    ...(entry.startsWith('/') ? { entryPoints: [entry] } : { stdin: { contents: `module.exports = require(${JSON.stringify(entry)});`, resolveDir: root, loader: 'js' } }),
    ...CJS_IN_MEMORY,
    plugins: [nodeHasUrl],
  });
  const name = entry.startsWith('/') ? entry.slice(root.length) : entry;
  payloads.set(name, gzipSync(outputFiles[0].contents, { level: 9 }).toString('base64'));
  // Compiled the way Node compiles a CommonJS file; the filename is what stack traces show.
  // lbdnsPayload is the entry's: it unpacks a payload from the bundle file (see entry()).
  return [
    "const { runInThisContext } = require('node:vm');",
    `runInThisContext('(function (exports, require, module) {' + lbdnsPayload(${JSON.stringify(name)}) + '\\n})', { filename: ${JSON.stringify(`lbdns.mjs[${name}]`)} })(module.exports, require, module);`,
  ].join('\n');
}

const lazyModules = {
  name: 'lazy-modules',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'lazy') return undefined;
      const resolved = LAZY.has(args.path) ? args.path : (await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'lazy' })).path;
      if (!LAZY.has(resolved)) return undefined;
      if (args.kind !== 'dynamic-import') throw new Error(`${args.importer} imports ${args.path} statically; only a dynamic import() keeps it off the start-up path`);
      return { path: resolved, namespace: 'lazy' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, async (args) => ({ contents: await lazyModule(args.path), loader: 'js', resolveDir: root }));
  },
};

/** See scripts/clipanion-patch.mjs. */
const fastClipanion = {
  name: 'fast-clipanion',
  setup(b) {
    b.onLoad({ filter: CLIPANION_CORE }, async (args) => ({ contents: patchClipanionCore(await readFile(args.path, 'utf8')), loader: 'js' }));
  },
};

/*
 * The application itself, as CommonJS source text: the ESM file below compiles it through
 * vm.Script with a V8 code cache, because compiling the code was the largest part of a cold
 * start left (every node boot runs render-corefile). Dynamic import() of Node's modules
 * becomes require(): a vm.Script has no module loader.
 */
const app = await build({
  entryPoints: [`${root}cmd/lbdns.ts`],
  ...CJS_IN_MEMORY,
  supported: { 'dynamic-import': false },
  define: { LBDNS_EMBEDDED_TEMPLATES: JSON.stringify(templates), 'import.meta.url': 'undefined' },
  plugins: [lazyModules, fastClipanion],
});
// The entry file's #! line would be a syntax error inside the function wrapper.
const appSource = app.outputFiles[0].text.replace(/^#!.*\n/, '');

/*
 * The file is a small ES module followed by its payload in comments: the application's
 * source, one line comment per line; then the V8 code cache and each lazy part, base64 in
 * block comments. The module reads its own file and slices them out by offset. As string
 * literals (how this started) V8 scanned a megabyte of them on every start, and kept each
 * literal in the heap beside the module's source for the life of the process.
 */
const HEADER = `#!/usr/bin/env node
// lbdns, built by scripts/bundle.mjs: this loader, then the application in comments.
import { fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
const require = createRequire(import.meta.url);
const filename = fileURLToPath(import.meta.url);
// Where each part sits, counted back from the end of the file: a packager that rewrites the
// #! line moves nothing.
const [appFrom, appTo, cacheFrom, cacheTo] = @APP_CACHE@;
const payloads = new Map(@PAYLOADS@);
const modified = (why) => new Error(\`\${filename} was modified after it was built (\${why}): rebuild it with make bundle\`);
// Kept open: a lazy part is read from this file even if a new build replaces it meanwhile.
const fd = openSync(filename, 'r');
const size = fstatSync(fd).size;
/** The bytes from \`from\` to \`to\` bytes before the end of the file. */
function read(from, to) {
  if (from > size) throw modified('too short');
  const bytes = Buffer.allocUnsafe(from - to);
  for (let at = 0, n = 1; at < bytes.length; at += n) {
    n = readSync(fd, bytes, at, bytes.length - at, size - from + at);
    if (n === 0) throw modified('too short');
  }
  return bytes;
}
// The application and its code cache, which every command needs, in one read.
const head = read(appFrom, cacheTo);
const source = head.toString('latin1', 0, appFrom - appTo).replaceAll('\\n//', '\\n');
if (!source.startsWith('(function (exports, require, module, lbdnsPayload) {') || !source.endsWith('\\n})')) throw modified('the application is not where it was put');
// Made for this Node build by \`make bundle\`; V8 ignores it (and compiles as usual) on any other.
let cachedData = Buffer.from(head.toString('latin1', appFrom - cacheFrom, appFrom - cacheTo), 'base64');
// Named as a path would not be: V8 keeps the name it was given when the cache was made.
const script = new Script(source, { filename: 'lbdns.mjs[app]', cachedData });
// Nothing needs the cache once compiled; a monitor runs for months.
cachedData = undefined;
if (process.env.LBDNS_CODE_CACHE_OUT) process.once('exit', () => require('node:fs').writeFileSync(process.env.LBDNS_CODE_CACHE_OUT, script.createCachedData()));
/** A part only the cluster commands load, read when first imported. */
function unpack(name) {
  try {
    return require('node:zlib').gunzipSync(Buffer.from(read(...payloads.get(name)).toString('latin1'), 'base64')).toString('utf8');
  } catch (err) {
    throw modified(\`\${name}: \${err.message}\`);
  }
}
const module = { exports: {} };
script.runInThisContext()(module.exports, require, module, unpack);
`;

function entry(codeCache) {
  const app = `(function (exports, require, module, lbdnsPayload) {${appSource}\n})`;
  // ASCII, so the latin1 slice is the text; no CR, which would end a line comment.
  if (/[^\x00-\x0c\x0e-\x7f]/.test(app)) throw new Error('the application source has a CR or a non-ASCII character; it cannot sit in line comments');
  // The loader reads the application and the cache as one range: they stay first, in this order.
  const sections = [
    ['app', '//', app.replaceAll('\n', '\n//'), '\n'],
    ['cache', '/*', codeCache?.toString('base64') ?? '', '*/\n'],
    ...[...payloads].map(([name, packed]) => [name, '/*', packed, '*/\n']),
  ];
  const tail = sections.map(([, open, text, close]) => open + text + close).join('');
  // Each part's start and end as distances from the end of the file.
  const at = new Map();
  let pos = 0;
  for (const [key, open, text, close] of sections) {
    at.set(key, [tail.length - pos - open.length, tail.length - pos - open.length - text.length]);
    pos += open.length + text.length + close.length;
  }
  const header = HEADER.replace('@APP_CACHE@', JSON.stringify([...at.get('app'), ...at.get('cache')])).replace(
    '@PAYLOADS@',
    JSON.stringify([...payloads.keys()].map((name) => [name, at.get(name)])),
  );
  return header + tail;
}

const out = process.argv[2] ?? `${root}dist/lbdns.mjs`;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, entry(undefined), { mode: 0o755 });
// The cache holds what a local render compiles (config file, render, atomic write), so it is
// made by running one.
const work = mkdtempSync(join(tmpdir(), 'lbdns-bundle-'));
const cacheFile = join(work, 'cache');
writeFileSync(join(work, 'config.yaml'), 'domain: c1.example.com\nloadBalancers:\n  api: [10.0.0.10]\n  apiInt: [10.0.0.20]\n  ingress: [10.0.1.30]\nnodes:\n  master-0: [10.0.0.5]\nupstreams: [10.0.0.2]\n');
execFileSync(process.execPath, [out, 'render-corefile', '--config', join(work, 'config.yaml'), '--out', join(work, 'Corefile')], { env: { ...process.env, LBDNS_CODE_CACHE_OUT: cacheFile }, stdio: 'ignore' });
writeFileSync(out, entry(readFileSync(cacheFile)), { mode: 0o755 });
rmSync(work, { recursive: true, force: true });
