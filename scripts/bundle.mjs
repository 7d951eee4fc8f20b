// Builds dist/lbdns.mjs: one ESM file that runs with plain `node`, templates embedded.
import { build } from 'esbuild';
import { readdirSync, readFileSync } from 'node:fs';
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

async function lazyModule(entry) {
  const { outputFiles } = await build({
    ...(entry.startsWith('/') ? { entryPoints: [entry] } : { stdin: { contents: `module.exports = require(${JSON.stringify(entry)});`, resolveDir: root, loader: 'js' } }),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    write: false,
    plugins: [nodeHasUrl],
    logLevel: 'warning',
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

await build({
  entryPoints: [`${root}cmd/lbdns.ts`],
  outfile: process.argv[2] ?? `${root}dist/lbdns.mjs`,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  legalComments: 'linked',
  define: { LBDNS_EMBEDDED_TEMPLATES: JSON.stringify(templates) },
  // Bundled CommonJS dependencies call require() for Node built-ins; ESM has none by default.
  banner: { js: "import { createRequire as __lbdnsCreateRequire } from 'node:module'; const require = __lbdnsCreateRequire(import.meta.url);" },
  plugins: [lazyModules],
  logLevel: 'warning',
});
