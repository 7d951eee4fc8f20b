// `make lint`: the import graph of lib/ and cmd/ has no cycle and follows the pipeline
// (lib/README.md): a lib/ folder imports only from folders earlier in STAGES, plus the
// shared lib/model.ts and lib/errors.ts; lib/ never imports cmd/. The one exception is the
// Logger type of runtime/log.ts, which every stage takes as a parameter.
import { readFileSync } from 'node:fs';
import madge from 'madge';

const STAGES = ['grammar', 'inputs', 'kube', 'sources', 'resolve', 'render', 'sinks', 'runtime', 'commands'];
const TYPE_ONLY_ANYWHERE = 'lib/runtime/log.ts';

/** Where a repository path sits: 'cmd', 'base' (a file directly in lib/) or a stage folder. */
function place(path) {
  const parts = path.split('/');
  if (parts[0] !== 'lib') return parts[0];
  return parts.length === 2 ? 'base' : parts[1];
}

function importsOnlyTypesOf(file, dep) {
  const relative = new RegExp(`['"][./]+${dep.replace(/^lib\//, '').replace(/\.ts$/, '')}\\.js['"]`);
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => relative.test(line));
  return lines.length > 0 && lines.every((line) => /^import type /.test(line));
}

export function violations(graph) {
  const found = [];
  for (const [file, deps] of Object.entries(graph)) {
    const from = place(file);
    for (const dep of deps) {
      const to = place(dep);
      if (from === to || to === 'base') continue;
      if (from !== 'cmd' && to === 'cmd') {
        found.push(`${file} imports ${dep}: lib/ never imports cmd/`);
      } else if (from === 'base' && to !== 'grammar') {
        found.push(`${file} imports ${dep}: lib/*.ts import only lib/grammar/`);
      } else if (STAGES.includes(from) && STAGES.indexOf(to) > STAGES.indexOf(from)) {
        if (dep === TYPE_ONLY_ANYWHERE && importsOnlyTypesOf(file, dep)) continue;
        found.push(`${file} imports ${dep}: ${from}/ comes before ${to}/ in the pipeline`);
      }
    }
  }
  return found;
}

const result = await madge(['lib', 'cmd'], { fileExtensions: ['ts'], baseDir: '.' });
const problems = [
  ...result.circular().map((cycle) => `import cycle: ${[...cycle, cycle[0]].join(' -> ')}`),
  ...violations(result.obj()),
];
const skipped = result.warnings().skipped.filter((dep) => dep.startsWith('.'));
for (const dep of skipped) problems.push(`unresolved import: ${dep}`);
if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`imports: ${Object.keys(result.obj()).length} files, no cycle, pipeline order kept`);
