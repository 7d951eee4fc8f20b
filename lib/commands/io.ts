import type { RawConfig } from '../config.js';
import { createLogger, type Logger } from '../log.js';

export interface Io {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
}

/** What every command takes from its flags. */
export interface CommandInputs {
  readonly configFile?: string | undefined;
  readonly example?: boolean;
  readonly flags: RawConfig;
  readonly io: Io;
}

export function loggerFor(io: Io): Logger {
  return createLogger(io.stderr, (process.env.LBDNS_LOG_LEVEL as 'debug' | undefined) ?? 'info');
}
