import { Builtins, Cli, type BaseContext } from 'clipanion';
import { EXIT, exitCodeOf, LbdnsError } from '../lib/errors.js';
import { DisplayCommand } from './display.js';
import { LbdnsCommand } from './options.js';
import { RenderCorefileCommand } from './render-corefile.js';
import { UpdateInfraStatusCommand } from './update-infra-status.js';
import { WatchLbStatusCommand } from './watch-lb-status.js';

export const COMMANDS = [RenderCorefileCommand, DisplayCommand, WatchLbStatusCommand, UpdateInfraStatusCommand];

export function buildCli(): Cli {
  const cli = new Cli({ binaryLabel: 'lbdns', binaryName: 'lbdns', binaryVersion: '0.1.0', enableColors: false });
  for (const c of [...COMMANDS, Builtins.HelpCommand, Builtins.VersionCommand]) cli.register(c);
  return cli;
}

/**
 * Runs one command line and returns its exit code. Clipanion prints its own errors to
 * stdout; here every error goes to stderr so stdout carries only the command's output.
 */
export async function runCli(argv: readonly string[], context: Pick<BaseContext, 'stdout' | 'stderr'> & Partial<BaseContext>): Promise<number> {
  const cli = buildCli();
  const ctx = { ...Cli.defaultContext, ...context };
  let command;
  try {
    command = cli.process([...argv], ctx);
  } catch (err) {
    ctx.stderr.write(`lbdns: ${(err as Error).message.trim()}\nRun "lbdns --help" for usage.\n`);
    return EXIT.config;
  }
  const code = await cli.run(command, ctx);
  if (!(command instanceof LbdnsCommand) || command.failure === undefined) return code;
  const err = command.failure;
  ctx.stderr.write(`lbdns: error: ${err instanceof LbdnsError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  return exitCodeOf(err);
}
