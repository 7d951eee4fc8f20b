/**
 * lbdns's own help text. Clipanion 3 prints every option value as `#0` and has no way to name
 * it, nor to group options; its option definitions (cli.definitions()) are read here and laid
 * out as docs/commands.md writes them.
 */
import { Cli, Command, type CommandClass } from 'clipanion';
import { EXIT } from '../lib/errors.js';
import { ROLES } from '../lib/model.js';
import { ClusterCommand, InputCommand, type ExitCodes } from './options.js';

/** What each value-taking flag expects, as docs/commands.md names it. A new flag needs an entry (test/help.test.ts checks). */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  '--config': 'FILE',
  '--domain': 'DOMAIN',
  '--role': ROLES.join('|'),
  '--api-lb': 'IP|HOST',
  '--api-int-lb': 'IP|HOST',
  '--ingress-lb': 'IP|HOST',
  '--node': 'NAME=IP',
  '--upstream': 'IP[:PORT]',
  '--health-port': 'PORT',
  '--ready-port': 'PORT',
  '--resolv-conf': 'FILE',
  '--dns-server': 'IP[:PORT]',
  '--template': 'FILE',
  '--ttl': 'SECONDS',
  '--reload-interval': 'DURATION',
  '--reload-jitter': 'DURATION',
  '--listen': 'ADDR:PORT',
  '--kubeconfig': 'FILE',
  '--ingress-service': 'NS/NAME',
  '--lb-config': 'NS/NAME',
  '--wait-timeout': 'DURATION',
  '--api-port': 'PORT',
  '--if-unreachable': 'keep|fail',
  '--gateway-zone': 'ZONE',
  '--geo-code': 'CODES',
  '--gateway-ttl': 'SECONDS',
  '--api-int-seed': 'ADDR',
  '--gateway-lb-ttl': 'SECONDS',
  '--out': 'FILE',
  '--dnsmasq-out': 'FILE',
  '--metrics-addr': 'HOST:PORT',
  '--fields': 'LIST',
  '--format': 'zone|nsupdate|json',
  '--nsupdate-server': 'IP[:PORT]',
  '--server': 'IP|HOST[:PORT]',
  '--names': 'LIST',
  '--output': 'table|json',
  '--timeout': 'DURATION',
  '--apps-host': 'HOST',
};

/** Flags that choose where and how a command's result goes, shown apart from what it reads. */
const OUTPUT_FLAGS: ReadonlySet<string> = new Set(['--out', '--dnsmasq-out', '--diff', '--dry-run', '--format', '--output', '--cname', '--nsupdate-server', '--warn-only']);

const WIDTH = 80;
const EXIT_ORDER = [EXIT.ok, EXIT.runtime, EXIT.config, EXIT.mismatch] as const;

interface OptionLine {
  readonly flag: string;
  readonly definition: string;
  readonly description: string;
}

type LbdnsCommandClass = CommandClass & { exitCodes?: ExitCodes; usage?: { description?: string; details?: string; examples?: [string, string][] } };

/** Greedy word wrap; clipanion's formatter wraps at 80 but cannot indent continuation lines. */
function wrap(text: string, indent: number, first = indent): string {
  const lines: string[] = [];
  let line = '';
  let width = WIDTH - first;
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
      width = WIDTH - indent;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

function optionLines(commandClass: CommandClass): OptionLine[] {
  const cli = new Cli({ binaryName: 'lbdns' });
  cli.register(commandClass);
  const [definition] = cli.definitions();
  return (definition?.options ?? []).map(({ definition: raw, description }) => {
    const flag = raw.split(' ')[0] ?? raw;
    const takesValue = raw.includes(' #0');
    return { flag, definition: takesValue ? `${flag} ${PLACEHOLDERS[flag] ?? 'VALUE'}` : flag, description: description ?? '' };
  });
}

/** The flags of a class with no options of its own beyond its base: which base class declares which flag. */
function flagsDeclaredBy(base: typeof InputCommand): Set<string> {
  class Probe extends base {
    static override paths = [['probe']];
    static override usage = Command.Usage({ description: 'probe' });
    override async execute(): Promise<number> {
      return 0;
    }
  }
  return new Set(optionLines(Probe).map((o) => o.flag));
}

let baseFlags: { local: Set<string>; cluster: Set<string> } | undefined;

function groupsOf(commandClass: CommandClass): [string, OptionLine[]][] {
  baseFlags ??= { local: flagsDeclaredBy(InputCommand), cluster: flagsDeclaredBy(ClusterCommand as unknown as typeof InputCommand) };
  const { local, cluster } = baseFlags;
  const name = commandClass.paths?.[0]?.join(' ') ?? '';
  const groups: [string, OptionLine[]][] = [
    ['Local inputs (flags win over --config FILE)', []],
    ['Cluster (read when KUBECONFIG, --kubeconfig or --cluster is given)', []],
    ['Output', []],
    [`${name} options`, []],
  ];
  for (const option of optionLines(commandClass)) {
    const index = local.has(option.flag) || option.flag === '--example' ? 0 : cluster.has(option.flag) ? 1 : OUTPUT_FLAGS.has(option.flag) ? 2 : 3;
    groups[index]![1].push(option);
  }
  return groups.filter(([, options]) => options.length > 0);
}

/** `lbdns COMMAND --help`. */
export function commandHelp(commandClass: LbdnsCommandClass): string {
  const name = commandClass.paths?.[0]?.join(' ') ?? '';
  const usage = commandClass.usage ?? {};
  const positional = commandClass.prototype instanceof ClusterCommand ? ' [KUBECONFIG]' : '';
  let out = `lbdns ${name} — ${usage.description ?? ''}\n\nUsage: lbdns ${name} [OPTIONS]${positional}\n`;
  if (usage.details) out += `\n${wrap(usage.details, 0)}\n`;
  const groups = groupsOf(commandClass);
  const column = Math.min(32, Math.max(...groups.flatMap(([, options]) => options.map((o) => o.definition.length))) + 4);
  for (const [title, options] of groups) {
    out += `\n${title}:\n`;
    for (const o of options) {
      const head = `  ${o.definition}`;
      const lead = head.length + 2 > column ? `${head}\n${' '.repeat(column)}` : head.padEnd(column);
      out += `${lead}${wrap(o.description, column)}\n`;
    }
  }
  const codes = commandClass.exitCodes ?? {};
  out += '\nExit codes:\n';
  for (const code of EXIT_ORDER) {
    const meaning = codes[code];
    if (meaning !== undefined) out += `  ${code}  ${wrap(meaning, 5)}\n`;
  }
  if (usage.examples && usage.examples.length > 0) {
    out += '\nExamples:\n';
    for (const [label, line] of usage.examples) out += `  ${label}\n    $ ${line}\n`;
  }
  return out;
}

/** `lbdns --help`: one screen, pointing at the first command to try. */
export function topHelp(commands: readonly LbdnsCommandClass[], version: string): string {
  const names = commands.map((c) => c.paths?.[0]?.join(' ') ?? '');
  const column = Math.max(...names.map((n) => n.length)) + 4;
  const rows = commands.map((c, i) => `  ${names[i]!.padEnd(column)}${wrap(c.usage?.description ?? '', column + 2)}`);
  return [
    `lbdns ${version} — keeps a cluster's own CoreDNS answering for its load balancers`,
    '',
    'Usage: lbdns COMMAND [OPTIONS] [KUBECONFIG]',
    '',
    'Start here: see the records lbdns would serve, for a built-in example cluster',
    '  $ lbdns print-records --example',
    'then for your cluster, read-only:',
    '  $ lbdns print-records ~/.kube/config',
    '',
    'Commands:',
    ...rows,
    '',
    'Every command reads the same local inputs (--config FILE, --domain DOMAIN,',
    '--api-lb IP|HOST, …) and, given a kubeconfig, the cluster.',
    '"lbdns COMMAND --help" lists a command\'s options and exit codes;',
    '"lbdns --version" prints the version.',
    '',
  ].join('\n');
}
