import { Builtins, Cli, type BaseContext } from 'clipanion';
import { EXIT, exitCodeOf, failureMessage, printable } from '../lib/errors.js';
import { flushQuietly, watchOutput } from '../lib/sinks/stdout.js';
import { CheckDnsCommand } from './check-dns.js';
import { DisplayCommand } from './display.js';
import { commandHelp, topHelp } from './help.js';
import { LbdnsCommand } from './options.js';
import { PrintRecordsCommand } from './print-records.js';
import { RenderCorefileCommand } from './render-corefile.js';
import { RenderDnsmasqCommand } from './render-dnsmasq.js';
import { UpdateInfraStatusCommand } from './update-infra-status.js';
import { WatchLbStatusCommand } from './watch-lb-status.js';

const VERSION = '0.1.0';

export const COMMANDS = [RenderCorefileCommand, DisplayCommand, WatchLbStatusCommand, UpdateInfraStatusCommand, PrintRecordsCommand, CheckDnsCommand, RenderDnsmasqCommand];

/**
 * Clipanion compiles one state machine over every registered command's options on each run,
 * a large part of a cold start. A command line that names a command gets that command alone
 * (its own --help needs no built-in); anything else (`--help`, `--version`, a misspelt
 * command) sees them all.
 */
export function buildCli(argv: readonly string[] = []): Cli {
  const cli = new Cli({ binaryLabel: 'lbdns', binaryName: 'lbdns', binaryVersion: VERSION, enableColors: false });
  const named = namedCommands(argv);
  for (const c of named.length > 0 ? named : [...COMMANDS, Builtins.HelpCommand, Builtins.VersionCommand]) cli.register(c);
  return cli;
}

function namedCommands(argv: readonly string[]): (typeof COMMANDS)[number][] {
  return COMMANDS.filter((c) => c.paths?.some((path) => path.every((segment, i) => argv[i] === segment)));
}

type CliContext = Pick<BaseContext, 'stdout' | 'stderr'> & Partial<BaseContext>;

/**
 * Runs one command line and returns its exit code once everything it printed has reached
 * its reader: a command whose output could not be written whole fails (exit 1).
 */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const output = watchOutput(context.stdout);
  let code = await runCommandLine(argv, context);
  const failed = await output.finish();
  if (failed !== undefined && code === EXIT.ok) {
    context.stderr.write(`lbdns: error: ${printable(failed.message)}\n`);
    code = failed.exitCode;
  }
  await flushQuietly(context.stderr);
  return code;
}

/**
 * `--ttl -1` as `--ttl=-1`, `--api-int-lb -lb.example.com` as `--api-int-lb=-lb.example.com`:
 * clipanion takes a value that starts with a dash for an option and reports "not enough
 * arguments"; joined, the value reaches its check, which says what is wrong. lbdns has no
 * single-dash option but -h, and no argument of its own starts with a dash.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (/^--[a-z][a-z-]*$/.test(arg) && next !== undefined && /^-(?!-|h$)./.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Clipanion prints its own errors to stdout; here every error goes to stderr so stdout carries only the command's output. */
async function runCommandLine(argv: readonly string[], context: CliContext): Promise<number> {
  const cli = buildCli(argv);
  const ctx = { ...Cli.defaultContext, ...context };
  let command;
  try {
    command = cli.process(joinNegativeValues(argv), ctx);
  } catch (err) {
    // Clipanion appends a usage line with unnamed values (#0); the command's --help names them.
    const reason = (err as Error).message.split('\n\n$ ')[0]?.trim() ?? '';
    // One line: the reason, and for "did you mean one of:" the commands it lists (not their whole usage).
    const [first = '', ...rest] = reason.split('\n');
    const candidates = [...new Set(rest.flatMap((l) => /^\s*(?:\d+\.|\$)\s+(lbdns [a-z][a-z-]*)/.exec(l)?.[1] ?? []))];
    const typed = namedCommands(argv)[0]?.paths?.[0] ?? [];
    const command = ['lbdns', ...typed].join(' ');
    // Clipanion says "command not found" for a known command given more arguments than it takes.
    const line =
      typed.length > 0 && candidates.length > 0 && candidates.every((c) => c === command)
        ? `${command} takes at most one argument besides its options (the kubeconfig)`
        : candidates.length > 0
          ? `${first} ${candidates.join(', ')}`
          : first;
    const help = [command, '--help'].join(' ');
    ctx.stderr.write(`lbdns: ${printable(line)}\nRun "${help}" for usage.\n`);
    return EXIT.config;
  }
  if (!(command instanceof LbdnsCommand) && !(command instanceof Builtins.VersionCommand)) {
    // Clipanion's help for `--help`, `-h` or a command line that asks for it: ours names every value.
    const [named] = namedCommands(argv);
    ctx.stdout.write(named === undefined ? topHelp(COMMANDS, VERSION) : commandHelp(named));
    return EXIT.ok;
  }
  const code = await cli.run(command, ctx);
  if (!(command instanceof LbdnsCommand) || command.failure === undefined) return code;
  const err = command.failure;
  ctx.stderr.write(`lbdns: error: ${failureMessage(err, process.env.LBDNS_LOG_LEVEL === 'debug')}\n`);
  return exitCodeOf(err);
}
