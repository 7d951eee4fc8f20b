import { WriteError } from '../errors.js';

/** What runCli needs of standard output and standard error (a process stream or a test's collector). */
export interface OutputStream {
  write(chunk: string, callback?: (err?: Error | null) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Standard output as a sink. A pipe takes writes asynchronously: whatever the reader has not
 * yet taken waits in the process, and exiting drops it. A reader that went away (EPIPE) or
 * a full disk (ENOSPC) shows only as an 'error' event or a write callback, never as an
 * exception at the write. `watchOutput` is called before the command writes anything;
 * `finish` waits until every write has reached the reader and says whether one failed.
 */
export function watchOutput(stream: OutputStream): { finish(): Promise<WriteError | undefined> } {
  let failure: Error | undefined;
  // A listener also keeps an EPIPE from becoming an uncaught exception with a stack trace.
  stream.on('error', (err) => (failure ??= err));
  return {
    finish: () =>
      new Promise((resolve) => {
        const done = (err?: Error | null): void => {
          const cause = failure ?? err ?? undefined;
          resolve(cause === undefined ? undefined : outputError(cause));
        };
        try {
          // Writes complete in order: the callback of an empty write runs after every earlier one.
          stream.write('', done);
        } catch (err) {
          done(err as Error);
        }
      }),
  };
}

/** Waits for stderr the same way; there is nowhere left to report its failure. */
export async function flushQuietly(stream: OutputStream): Promise<void> {
  await watchOutput(stream).finish();
}

function outputError(err: Error): WriteError {
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === 'EPIPE'
      ? 'the reader closed the pipe before the output was complete'
      : code === 'ENOSPC'
        ? 'no space left on the device'
        : (code ?? err.message);
  return new WriteError(`cannot write standard output: ${why} (${code ?? 'error'}); the output is incomplete`, { cause: err });
}
