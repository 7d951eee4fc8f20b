// Builds dist/lbdns.mjs: one ESM file that runs with plain `node`, templates embedded.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

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
  const packed = gzipSync(outputFiles[0].contents, { level: 9 }).toString('base64');
  const name = entry.startsWith('/') ? entry.slice(root.length) : entry;
  // Compiled the way Node compiles a CommonJS file; the filename is what stack traces show.
  return [
    "const { runInThisContext } = require('node:vm');",
    "const { gunzipSync } = require('node:zlib');",
    `const source = gunzipSync(Buffer.from(${JSON.stringify(packed)}, 'base64')).toString('utf8');`,
    `runInThisContext('(function (exports, require, module) {' + source + '\\n})', { filename: ${JSON.stringify(`lbdns.mjs[${name}]`)} })(module.exports, require, module);`,
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
  plugins: [lazyModules],
});
// The entry file's #! line would be a syntax error inside the function wrapper.
const appSource = app.outputFiles[0].text.replace(/^#!.*\n/, "");

function entry(codeCache) {
  return [
    '#!/usr/bin/env node',
    "import { createRequire } from 'node:module';",
    "import { Script } from 'node:vm';",
    "import { fileURLToPath } from 'node:url';",
    'const require = createRequire(import.meta.url);',
    'const filename = fileURLToPath(import.meta.url);',
    `const source = ${JSON.stringify(`(function (exports, require, module) {${appSource}
})`)};`,
    // Made for this Node build by `make bundle`; V8 ignores it (and compiles as usual) on any other.
    `let cachedData = ${codeCache ? `Buffer.from(${JSON.stringify(codeCache.toString('base64'))}, 'base64')` : 'undefined'};`,
    'const script = new Script(source, { filename, cachedData });',
    // Nothing needs the cache once compiled; a monitor runs for months.
    'cachedData = undefined;',
    "if (process.env.LBDNS_CODE_CACHE_OUT) process.once('exit', () => require('node:fs').writeFileSync(process.env.LBDNS_CODE_CACHE_OUT, script.createCachedData()));",
    'const module = { exports: {} };',
    'script.runInThisContext()(module.exports, require, module);',
    '',
  ].join('\n');
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
