import { Command } from 'clipanion';
import { displayCommand } from '../lib/commands/display.js';
import { ClusterCommand, exampleOption } from './options.js';

export class DisplayCommand extends ClusterCommand {
  override example = exampleOption();
  static override paths = [['display']];
  static override usage = Command.Usage({
    description: "Print the template's data model as JSON",
    details: 'The same inputs as render-corefile; prints what the Corefile template will see: spec, resolutions, recordSet, notServed and unmanaged.',
    examples: [
      ['Show the example cluster', 'lbdns display --example'],
      ['Show what the cluster says', 'lbdns display --kubeconfig ~/.kube/config'],
    ],
  });

  static override exitCodes = {
    0: 'printed',
    1: "a host name did not resolve, the write failed, the API server was unreachable, or the role's names were still missing after --wait-timeout",
    2: 'a bad flag or value, an unreadable config file, kubeconfig or template, no usable upstream, or a request refused by RBAC',
  };

  override async execute(): Promise<number> {
    return displayCommand({
      ...this.inputs(),
      cluster: this.clusterSource(),
    });
  }
}
