import { Command } from 'clipanion';
import { renderDnsmasqCommand } from '../lib/commands/render-dnsmasq.js';
import { validatePath } from '../lib/grammar/validate.js';
import { dnsmasqHostsDir } from '../lib/sinks/dnsmasq-output.js';
import { ClusterCommand, exampleOption, oneValue } from './options.js';

export class RenderDnsmasqCommand extends ClusterCommand {
  override example = exampleOption();
  static override paths = [['render-dnsmasq']];
  static override usage = Command.Usage({
    description: "Render the drop-in for the node's dnsmasq",
    details:
      "For the on-prem design's node-local dnsmasq: api-int answers from dnsmasq itself, every query type, from a hosts file in a directory beside the drop-in that dnsmasq watches (hostsdir), so the API is found while CoreDNS is not running and a move of api-int reaches the running dnsmasq; every other name of the domain goes to the local CoreDNS at --listen. Same inputs as render-corefile; --listen must give CoreDNS a port other than 53, where dnsmasq listens (e.g. 127.0.0.1:5353). Each file written atomically, only when it changed. watch-lb-status --dnsmasq-out keeps them current.",
    examples: [['The drop-in beside a CoreDNS on port 5353', 'lbdns render-dnsmasq /var/lib/kubelet/kubeconfig --listen 127.0.0.1:5353 --out /etc/dnsmasq.d/lbdns.conf']],
  });

  static override exitCodes = {
    0: 'written or unchanged',
    1: 'as render-corefile',
    2: 'as render-corefile; no --out, or one that is not an absolute plain path; or --listen on port 53 (any address), where the node dnsmasq listens and would forward the cluster to itself',
  };

  out = oneValue('--out', { description: 'Where to write the drop-in, atomically; the hosts file dnsmasq answers api-int from goes in a directory beside it (lbdns.conf: lbdns.hosts/)' });

  override checkFlags(): void {
    super.checkFlags();
    if (this.out !== undefined) {
      validatePath('--out', this.out);
      if (this.out !== '-') dnsmasqHostsDir(this.out, '--out');
    }
  }

  override async execute(): Promise<number> {
    return renderDnsmasqCommand({ ...this.inputs(), out: this.out, cluster: this.clusterSource() });
  }
}
