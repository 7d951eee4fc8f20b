// Builds dist/lbdns.mjs: one ESM file that runs with plain `node`, templates embedded.
import { build } from 'esbuild';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const templates = Object.fromEntries(
  readdirSync(`${root}templates`)
    .filter((f) => f.endsWith('.eta'))
    .map((f) => [f, readFileSync(`${root}templates/${f}`, 'utf8')]),
);

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
  logLevel: 'warning',
});
