import { createContext, Script, type Context } from 'node:vm';
import { Eta } from 'eta';
import { checkCorefile } from './corefile-check.js';
import { RenderError } from '../errors.js';
import type { NameRecord, RecordSet } from '../model.js';
import { templateBlocks, templateNames, type TemplateBlock, type TemplateName } from './template-blocks.js';
import { negativeSoa } from './zone-file.js';
import { splitByZone } from './zone-file.js';

/*
 * autoEscape off: eta's HTML escaping would mangle a Corefile; values are validated instead.
 * autoTrim off: eta's default eats the newline after every tag, including a value ending a
 * line; control lines end in `-%>` to drop their own newline.
 */
// debug: eta records the template line of each tag, so an error can name it.
const eta = new Eta({ autoEscape: false, autoTrim: false, useWith: false, cache: false, debug: true });
// eta's RuntimeErr reads the thrown value's message and name: a template throwing null would fail inside it, one throwing a string say "undefined".
const etaRuntimeErr = eta.RuntimeErr;
eta.RuntimeErr = (thrown: unknown, str: string, lineNo: number, path: string) =>
  etaRuntimeErr(typeof (thrown as { message?: unknown } | null)?.message === 'string' ? (thrown as Error) : new Error(describeThrown(thrown)), str, lineNo, path);

/** A thrown value that is no Error, as text: String() itself throws for an object without a prototype or with a toString that throws. */
function describeThrown(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    return Object.prototype.toString.call(thrown);
  }
}

/** A thrown message as the error line shows it: a template's own can be of any length. */
const MAX_THROWN_CHARS = 200;
const compiled = new Map<string, ReturnType<Eta['compile']>>();

/**
 * A template is code: one that never ends would hold the initContainer, and with it CoreDNS,
 * forever. The built-in one renders 10,000 nodes in about 20 ms.
 */
const TEMPLATE_TIME_LIMIT_MS = 2000;

/** Many times the built-in template's output for 20,000 dual-stack nodes (about 3 MB): more is a template gone wrong. */
const MAX_COREFILE_CHARS = 32 * 2 ** 20;

/**
 * vm's watchdog stops whatever JavaScript runs inside runInContext, the template's function
 * included. An admin's template is also made a function of this context, whose globals are
 * JavaScript's alone: no `process`, `require` or timers, so a template written by mistake can
 * neither end lbdns nor leave code running after its render; it fails with a line instead.
 * Not a security boundary (Node's vm is none): `it` and eta come from lbdns's realm, and a
 * template that climbs their constructors reaches `process`. The template is the admin's,
 * read from a file only the node's admin writes. Made at the first custom render, as a
 * context costs a few milliseconds of start-up.
 */
let runner: { readonly sandbox: Context; readonly script: Script } | undefined;

function sandbox(): { readonly sandbox: Context; readonly script: Script } {
  // afterEvaluate: the template's promise callbacks run inside runInContext, under its time limit.
  runner ??= { sandbox: createContext({ render: (): unknown => undefined }, { microtaskMode: 'afterEvaluate' }), script: new Script('render()') };
  return runner;
}

/** The template's eta function, made in the sandbox's realm (eta.compile has already checked its syntax). */
function inSandbox(template: string): ReturnType<Eta['compile']> {
  const code = `(function (${eta.config.varName}, options) {\n${eta.compileToString(template)}\n})`;
  return new Script(code, { filename: 'template' }).runInContext(sandbox().sandbox) as ReturnType<Eta['compile']>;
}

function withinTimeLimit(render: () => unknown): unknown {
  const { sandbox: context, script } = sandbox();
  context.render = render;
  try {
    return script.runInContext(context, { timeout: TEMPLATE_TIME_LIMIT_MS });
  } finally {
    context.render = () => undefined;
  }
}

/**
 * The template line of a JavaScript syntax error inside its tags. V8 says only where in the
 * generated function the error is; eta's debug mode marks each tag's code with its line.
 */
function syntaxErrorLine(template: string): number | undefined {
  const code = `(function (it, options) {\n${eta.compileToString(template)}\n})`;
  try {
    new Script(code, { filename: 'template' });
    return undefined;
  } catch (err) {
    const at = /^template:(\d+)/.exec((err as Error).stack ?? '');
    if (at === null) return undefined;
    const marks = code.split('\n').slice(0, Number(at[1])).flatMap((line) => /^__eta\.line=(\d+)$/.exec(line)?.[1] ?? []);
    return marks.length > 0 ? Number(marks.at(-1)) : undefined;
  }
}

/** eta's parse and syntax errors as one line that names the template line, without the generated code eta appends. */
function compileError(template: string, source: string, err: unknown): RenderError {
  const message = (err as Error).message;
  const syntax = /^Bad template syntax\s+([^\n]*)/.exec(message);
  if (syntax !== null) {
    const line = syntaxErrorLine(template);
    return new RenderError(`template ${source}${line === undefined ? '' : ` line ${line}`}: JavaScript syntax error inside <% %>: ${syntax[1]}`);
  }
  return new RenderError(`template ${source}: ${message.split('\n')[0]?.replace(/:$/, '') ?? message}`);
}

function compile(template: string, source: string) {
  let fn = compiled.get(template);
  if (!fn) {
    try {
      fn = eta.compile(template);
    } catch (err) {
      throw compileError(template, source, err);
    }
    if (source !== 'builtin') fn = inSandbox(template);
    compiled.set(template, fn);
  }
  return fn;
}

/**
 * A rejection nothing handled, as the error to exit with when an admin's template left it: a
 * promise the template made fails after its render has returned, so only its stack, with the
 * sandbox's `template` frames, says where it came from.
 */
export function templateRejection(reason: unknown): RenderError | undefined {
  const stack = (reason as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string' || !/^\s+at (?:.*\()?template:\d+:\d+\)?$/m.test(stack)) return undefined;
  return new RenderError(`the template left a promise that failed after its render: ${String((reason as { message?: unknown }).message)}`);
}

/** A failure while the template ran, with the line eta recorded and the original error's message. */
function runtimeError(source: string, err: unknown): RenderError {
  if ((err as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
    return new RenderError(`template ${source} did not finish within ${TEMPLATE_TIME_LIMIT_MS / 1000} s: a loop that never ends? Nothing was written`);
  }
  const e = err as Error;
  const line = /^line (\d+)\n/.exec(e.message)?.[1];
  // The cause comes from the sandbox's realm, whose Error is not this one's.
  const full = typeof (e.cause as Error | undefined)?.message === 'string' ? (e.cause as Error).message : e.message;
  const cause = full.length > MAX_THROWN_CHARS ? `${full.slice(0, MAX_THROWN_CHARS)}…` : full;
  return new RenderError(`template ${source}${line === undefined ? '' : ` line ${line}`} failed: ${cause}`);
}

/**
 * What a template sees as `it`: the record set; the names outside Gateway zones as CoreDNS
 * template blocks; each Gateway zone with the file that serves its names; and the SOA a block
 * that answers nothing gives in its authority section (`negativeSoa`), so resolvers cache the
 * empty answer (RFC 2308) as they do a Gateway zone's.
 */
export type CorefileData = Omit<RecordSet, 'names'> & { readonly names: readonly NameRecord[] | readonly TemplateName[]; readonly templates: readonly TemplateBlock[]; readonly zones: readonly { readonly zone: string; readonly file: string }[]; readonly negativeSoa: string };

/** The Gateway zones with their files; a record set with zones must say where the files are. */
function zonesOf(recordSet: RecordSet): CorefileData['zones'] {
  return (recordSet.gatewayZones ?? []).map((zone) => {
    const file = recordSet.zoneFiles?.get(zone);
    if (file === undefined) throw new RenderError(`Gateway zone ${zone} is served from a zone file beside the Corefile: give --out FILE`);
    return { zone, file };
  });
}

/**
 * RecordSet → Corefile text, checked. `source` names the template in messages. Pure: the
 * same record set and template always give the same bytes (no timestamps), so an
 * unchanged answer never rewrites the file.
 */
export function renderCorefile(recordSet: RecordSet, template: string, source: string): string {
  let text: string;
  const fn = compile(template, source);
  const { rest } = splitByZone(recordSet.names, recordSet.gatewayZones ?? []);
  // An admin's template may read it.names with each block's zone and match; the built-in one reads it.templates.
  const names = source === 'builtin' ? recordSet.names : templateNames(recordSet.names);
  const data: CorefileData = { ...recordSet, names, templates: templateBlocks(rest, recordSet.ttl), zones: zonesOf(recordSet), negativeSoa: negativeSoa(recordSet.domain) };
  try {
    // The built-in template is lbdns's own code: only an admin's template runs under the limit,
    // on a copy, so that a sort() or splice() in it cannot change what other outputs are made from.
    const rendered: unknown = source === 'builtin' ? fn.call(eta, data, {}) : withinTimeLimit(() => fn.call(eta, structuredClone(data), {}));
    if (typeof rendered !== 'string') throw new Error(`it returned ${rendered === null ? 'null' : typeof rendered}, not text`);
    text = rendered;
  } catch (err) {
    throw runtimeError(source, err);
  }
  if (text.length > MAX_COREFILE_CHARS) throw new RenderError(`template ${source} produced ${text.length} characters, more than the ${MAX_COREFILE_CHARS} a Corefile may have here: nothing was written`);
  try {
    checkCorefile(text);
  } catch (err) {
    throw new RenderError(`template ${source} produced a Corefile CoreDNS would not serve correctly: ${(err as Error).message}`);
  }
  return text;
}
