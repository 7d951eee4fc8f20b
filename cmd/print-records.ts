import { Command, Option } from 'clipanion';
import { printRecordsCommand } from '../lib/commands/print-records.js';
import { ClusterCommand, exampleOption, oneValue } from './options.js';

export class PrintRecordsCommand extends ClusterCommand {
  override example = exampleOption();
  static override paths = [['print-records']];
  static override usage = Command.Usage({
    description: "Print the records for the admin's own DNS",
    details:
      'The api, api-int and *.apps records to create in the DNS the admin runs and, with a cluster, the records of every ingress controller\'s DNSRecord (Unmanaged ones, which nothing publishes, and Managed ones, which lbdns serves inside the cluster) at their recordTTL. Same inputs as render-corefile: flags and a config file, or the cluster when a kubeconfig is given. Node names are left out: the cluster serves those to itself. --names selects what is printed. --ttl sets the TTL of api, api-int and *.apps. With --cname, a load balancer that is exactly one host name (AWS) gets a CNAME to it instead of its current addresses; one that also has IPs, or several host names, keeps A/AAAA records, because a CNAME must be the only record at its name.',
    examples: [
      ['Zone file lines for the example cluster', 'lbdns print-records --example'],
      ['An nsupdate script from the cluster, CNAMEs to the AWS load balancers', 'lbdns print-records ~/.kube/config --format nsupdate --cname --nsupdate-server 192.0.2.53 > lbdns.nsupdate'],
      ['JSON for a script', 'lbdns print-records --config cluster.yaml --format json'],
    ],
  });

  static override exitCodes = {
    0: 'printed',
    1: "a host name did not resolve, the write failed, the API server was unreachable, the role's names were still missing after --wait-timeout, or nothing was left to print",
    2: 'a bad flag or value, an unreadable config file, kubeconfig or template, no usable upstream, or a request refused by RBAC',
  };

  names = oneValue('--names', { description: 'Comma-separated subset of api,api-int,apps,dnsrecords,gateway (default all)' });
  format = oneValue('--format', 'zone', { description: 'RFC 1035 zone lines, an nsupdate script or JSON (default zone)' });
  cname = Option.Boolean('--cname', false, { description: "CNAME to the LB's host name instead of its current IPs, where the LB is exactly one host name" });
  nsupdateServer = oneValue('--nsupdate-server', { description: 'The "server" line of the nsupdate script (default: none, nsupdate asks the zone\'s SOA)' });

  override async execute(): Promise<number> {
    return printRecordsCommand({
      ...this.inputs(),
      format: this.format,
      names: this.names,
      cname: this.cname,
      nsupdateServer: this.nsupdateServer,
      cluster: this.clusterSource(),
    });
  }
}
