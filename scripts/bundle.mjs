// Builds dist/ (or the directory given): the entry lbdns.mjs and the chunks it imports lazily,
// esbuild's standard code splitting. Runs with plain `node`, templates embedded, no node_modules.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = resolve(process.argv[2] ?? join(root, 'dist'));
const templates = Object.fromEntries(
  readdirSync(join(root, 'templates'))
    .filter((f) => f.endsWith('.eta'))
    .map((f) => [f, readFileSync(join(root, 'templates', f), 'utf8')]),
);

/*
 * node-fetch 2 (the Kubernetes client's HTTP layer) uses Node's own URL and falls back to the
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

// A stale chunk from an earlier build would ship beside the new ones. Only what a build writes
// is removed: the directory given may hold other files.
rmSync(join(outdir, 'chunks'), { recursive: true, force: true });
rmSync(join(outdir, 'lbdns.mjs'), { force: true });
mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: { lbdns: join(root, 'cmd/lbdns.ts') },
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  logLevel: 'warning',
  // The CommonJS dependencies (prom-client, the Kubernetes client and theirs) call require().
  banner: { js: "import { createRequire as lbdnsCreateRequire } from 'node:module'; const require = lbdnsCreateRequire(import.meta.url);" },
  // clipanion ships an ES module build its package.json does not name: as ESM it is shaken
  // and its own lazy import of typanion stays a chunk a command line never loads.
  alias: { clipanion: 'clipanion/lib/advanced/index.mjs' },
  define: { LBDNS_EMBEDDED_TEMPLATES: JSON.stringify(templates) },
  plugins: [nodeHasUrl],
});
