/**
 * Structured logs: one JSON object per line on stderr, the format cluster log pipelines parse.
 * Hand-written: a JSON line per call is all lbdns needs; pino would add its transports and
 * dependencies to every start for nothing more.
 */
import { printable } from '../errors.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function createLogger(out: { write(chunk: string): unknown }, minLevel: Level = 'info', base: Fields = {}): Logger {
  const emit = (level: Level) => (msg: string, fields: Fields = {}) => {
    if (ORDER[level] < ORDER[minLevel]) return;
    // Every character past ASCII as a JSON escape: a field's value read from the API (a C1 control, a bidi override) never reaches a terminal raw.
    out.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: printable(msg), ...base, ...fields }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
