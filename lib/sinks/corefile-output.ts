import { readInputFile } from '../inputs/admin-file.js';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-write.js';
import { ConfigError } from '../errors.js';
import { builtinTemplate } from '../render/templates.js';

export interface LoadedTemplate {
  readonly text: string;
  /** For messages: the file, or `builtin`. */
  readonly source: string;
}

export async function loadTemplate(path: string | undefined): Promise<LoadedTemplate> {
  if (path === undefined) return { text: builtinTemplate(), source: 'builtin' };
  return { text: await readInputFile(path, { flag: '--template', code: true }), source: path };
}

export type Emitted = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string; readonly written: boolean } | { readonly kind: 'diff'; readonly diff: string };

/** `out` undefined or '-' → stdout; `diff` → what would change on disk, nothing written. */
export async function emitCorefile(text: string, out: string | undefined, diff: boolean, stdout: { write(s: string): unknown }): Promise<Emitted> {
  if (diff) {
    if (out === undefined || out === '-') throw new ConfigError('--diff compares with the file on disk: give --out FILE');
    const current = await readFile(out, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw new ConfigError(`--out ${out}: cannot read it for --diff (${err.code ?? String(err)})`);
    });
    // Loaded here: only --diff needs the diff package.
    const { unifiedDiff } = await import('../render/diff.js');
    const d = unifiedDiff(current, text, out, `${out} (rendered)`);
    stdout.write(d);
    return { kind: 'diff', diff: d };
  }
  if (out === undefined || out === '-') {
    stdout.write(text);
    return { kind: 'stdout' };
  }
  const { written } = await writeFileAtomic(out, text);
  return { kind: 'file', path: out, written };
}
