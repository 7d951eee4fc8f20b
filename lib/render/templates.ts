import { readFileSync } from 'node:fs';

/** Set by the bundler (`make bundle`) so the single-file build carries its templates. */
declare const LBDNS_EMBEDDED_TEMPLATES: Record<string, string> | undefined;

const BUILTIN_TEMPLATE = 'corefile.eta';

/** The shipped Corefile template: embedded in the bundle, read from templates/ otherwise. */
export function builtinTemplate(): string {
  if (typeof LBDNS_EMBEDDED_TEMPLATES !== 'undefined') {
    const text = LBDNS_EMBEDDED_TEMPLATES[BUILTIN_TEMPLATE];
    if (text !== undefined) return text;
  }
  return readFileSync(new URL(`../../templates/${BUILTIN_TEMPLATE}`, import.meta.url), 'utf8');
}
