#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1 --heap-growing-percent=15
// A 1 MiB semi-space: V8's default lets the young generation grow to 32 MiB while a large
// Node list streams in, and a long-lived monitor then holds that memory. A heap grown 15 %
// past what is live before the next full collection, not V8's up to 100 %, and two malloc
// arenas, not one per thread: with 10,000 Gateway hosts a monitor otherwise holds 180 MiB where
// it needs 115. V8 reads its flags and glibc its variable only at start-up, so they are here
// and not in code (bench/RESULTS.md, api-scale and gateway-scale).
import { EXIT, exitCodeOf, failureMessage } from '../lib/errors.js';
import { templateRejection } from '../lib/render/corefile.js';
import { runCli } from './cli.js';

// A promise that fails with nothing waiting for it ends lbdns with one line, as any failure
// does, not Node's stack: an admin's template can leave one.
process.on('unhandledRejection', (reason) => {
  const err = templateRejection(reason) ?? reason;
  process.stderr.write(`lbdns: error: ${failureMessage(err, process.env.LBDNS_LOG_LEVEL === 'debug')}\n`);
  process.exit(err === reason ? EXIT.runtime : exitCodeOf(err));
});

// Exit with the command's code even if something still waits: a monitor stopped while it was
// starting may leave an API retry timer that would otherwise hold the process for minutes.
void runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then((code) => process.exit(code));
