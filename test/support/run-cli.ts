/**
 * Runs the lbdns command line in-process, as `lbdns ARGS…` would, and captures what it
 * prints: tests see exactly the bytes a user would see on stdout and stderr.
 */
import { Writable } from 'node:stream';
import { runCli } from '../../cmd/cli.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export async function runLbdns(argv: readonly string[]): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The structured log lines a run wrote to stderr, parsed. */
export function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
