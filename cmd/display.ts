import { Command } from 'clipanion';
import { displayCommand } from '../lib/commands/display.js';
import { ClusterCommand } from './options.js';

export class DisplayCommand extends ClusterCommand {
  static override paths = [['display']];
  static override usage = Command.Usage({
    description: 'Print the resolved data model as JSON: what the Corefile template will see',
    examples: [
      ['Show the example cluster', 'lbdns display --example'],
      ['Show what the cluster says', 'lbdns display --kubeconfig ~/.kube/config'],
    ],
  });

  override async execute(): Promise<number> {
    return displayCommand({
      ...this.inputs(),
      cluster: this.clusterSource(),
    });
  }
}
