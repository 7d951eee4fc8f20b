#!/usr/bin/env -S node --max-semi-space-size=1
// A 1 MiB semi-space: V8's default lets the young generation grow to 32 MiB while a large
// Node list streams in, and a long-lived monitor then holds that memory; V8 reads the flag only
// at start-up, so it is here and not in code (bench/RESULTS.md, api-scale).
import { runCli } from './cli.js';

// Exit with the command's code even if something still waits: a monitor stopped while it was
// starting may leave an API retry timer that would otherwise hold the process for minutes.
void runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then((code) => process.exit(code));
