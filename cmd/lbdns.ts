#!/usr/bin/env node
import { runCli } from './cli.js';

// Exit with the command's code even if something still waits: a monitor stopped while it was
// starting may leave an API retry timer that would otherwise hold the process for minutes.
void runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then((code) => process.exit(code));
