import { Eta } from 'eta';
import { checkCorefile } from './corefile-check.js';
import { RenderError } from '../errors.js';
import type { RecordSet } from '../model.js';

/*
 * autoEscape off: eta's HTML escaping would mangle a Corefile; values are validated instead.
 * autoTrim off: eta's default eats the newline after every tag, including a value ending a
 * line; control lines end in `-%>` to drop their own newline.
 */
const eta = new Eta({ autoEscape: false, autoTrim: false, useWith: false, cache: false });
const compiled = new Map<string, ReturnType<Eta['compile']>>();

function compile(template: string, source: string) {
  let fn = compiled.get(template);
  if (!fn) {
    try {
      fn = eta.compile(template);
    } catch (err) {
      throw new RenderError(`template ${source}: ${(err as Error).message}`);
    }
    compiled.set(template, fn);
  }
  return fn;
}

/**
 * RecordSet → Corefile text, checked. `source` names the template in messages. Pure: the
 * same record set and template always give the same bytes (no timestamps), so an
 * unchanged answer never rewrites the file.
 */
export function renderCorefile(recordSet: RecordSet, template: string, source: string): string {
  let text: string;
  try {
    text = compile(template, source).call(eta, recordSet);
  } catch (err) {
    if (err instanceof RenderError) throw err;
    throw new RenderError(`template ${source} failed: ${(err as Error).message}`);
  }
  try {
    checkCorefile(text);
  } catch (err) {
    throw new RenderError(`template ${source} produced a Corefile CoreDNS would not serve correctly: ${(err as Error).message}`);
  }
  return text;
}
