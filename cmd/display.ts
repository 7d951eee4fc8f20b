import { Command } from 'clipanion';
import { displayCommand } from '../lib/commands/display.js';
import { InputCommand } from './options.js';

export class DisplayCommand extends InputCommand {
  static override paths = [['display']];
  static override usage = Command.Usage({
    description: 'Print the resolved data model as JSON: what the Corefile template will see',
    examples: [['Show the example cluster', 'lbdns display --example']],
  });

  override async execute(): Promise<number> {
    return displayCommand({ configFile: this.config, example: this.example, flags: this.flagConfig(), io: this.context });
  }
}
