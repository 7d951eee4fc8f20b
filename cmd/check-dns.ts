import { Command, Option } from 'clipanion';
import { checkDnsCommand } from '../lib/commands/check-dns.js';
import { ClusterCommand, exampleOption, oneValue } from './options.js';

export class CheckDnsCommand extends ClusterCommand {
  override example = exampleOption();
  static override paths = [['check-dns']];
  static override usage = Command.Usage({
    description: "Check the admin's DNS servers against the LB IPs",
    details:
      'Checks that the admin\'s DNS servers answer api, api-int and *.apps with the load balancers\' IPs. Asks each server for A and AAAA of api.<domain>, api-int.<domain> and a random name under apps.<domain> and, with a cluster, each ingress controller\'s DNSRecord name (a random name under a wildcard), follows CNAMEs, and compares with the LB IPs from the same inputs as render-corefile (LB host names resolved through --dns-server or the system). Verdicts: ok, missing (NXDOMAIN/NODATA), wrong IP (none expected), partial (some lacking or extra), unreachable (no answer: a timeout, nothing listening), error answer (REFUSED, SERVFAIL). Exits 3 when any row is not ok, unless --warn-only.',
    examples: [
      ['Check the system resolvers against the example cluster', 'lbdns check-dns --example'],
      ['Check two DNS servers before installing', 'lbdns check-dns --config cluster.yaml --server 192.0.2.53 --server 192.0.2.54'],
      ['Check a DNS server by name, on another port', 'lbdns check-dns --config cluster.yaml --server dns1.example.com:5353'],
      ['Warn only, as JSON', 'lbdns check-dns ~/.kube/config --warn-only --output json'],
    ],
  });

  static override exitCodes = {
    0: 'every answer matches',
    1: "a host name did not resolve, the API server was unreachable, the role's names were still missing after --wait-timeout, or nothing was left to check (0 with --warn-only)",
    2: 'a bad flag or value, an unreadable config file, kubeconfig or template, no usable upstream, or a request refused by RBAC',
    3: 'a server answered otherwise than the LBs, or did not answer (0 with --warn-only)',
  };

  server = Option.Array('--server', { description: "The admin's DNS server to ask (repeatable; a row per server, and per address of a HOST, which the system resolver resolves once; default: the system resolvers)" });
  names = oneValue('--names', { description: 'Comma-separated subset of api,api-int,apps,dnsrecords,gateway (default all)' });
  warnOnly = Option.Boolean('--warn-only', false, { description: 'Print the same report but exit 0 on mismatches' });
  output = oneValue('--output', 'table', { description: 'A table or JSON (default table)' });
  timeout = oneValue('--timeout', '2s', { description: 'Wait for the first try of a query, twice that for the second (default 2s; 500ms works)' });
  appsHost = oneValue('--apps-host', { description: 'Ask HOST.apps.<domain> instead of a random name under apps (e.g. console-openshift-console)' });

  override async execute(): Promise<number> {
    return checkDnsCommand({
      ...this.inputs(),
      servers: this.server,
      names: this.names,
      warnOnly: this.warnOnly,
      output: this.output,
      timeout: this.timeout,
      appsHost: this.appsHost,
      cluster: this.clusterSource(),
    });
  }
}
