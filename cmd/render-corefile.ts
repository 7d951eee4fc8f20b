import { Command, Option } from 'clipanion';
import { renderCorefileCommand } from '../lib/commands/render-corefile.js';
import { validatePath } from '../lib/grammar/validate.js';
import { ClusterCommand, exampleOption, oneValue } from './options.js';
import { dnsmasqHostsDir } from '../lib/sinks/dnsmasq-output.js';

export class RenderCorefileCommand extends ClusterCommand {
  override example = exampleOption();
  static override paths = [['render-corefile']];
  static override usage = Command.Usage({
    description: 'Render the Corefile once and write it atomically',
    details: 'Gathers the LB data, resolves LB host names and renders the Corefile. With a kubeconfig (argument, --kubeconfig, or --cluster for KUBECONFIG / the pod service account) the LB data comes from the cluster, waiting up to --wait-timeout for it; flags still win where given.',
    examples: [
      ['Print the Corefile of the built-in example', 'lbdns render-corefile --example'],
      ['Write a Corefile from flags', 'lbdns render-corefile --domain c1.example.com --api-lb 10.0.0.10 --api-int-lb 10.0.0.11 --ingress-lb lb.example.net --out /etc/coredns/Corefile'],
      ['Write it from the cluster (initContainer)', 'lbdns render-corefile /var/lib/kubelet/kubeconfig --out /etc/coredns/Corefile'],
    ],
  });

  static override exitCodes = {
    0: 'written, unchanged or printed; or, with --if-unreachable=keep, the API server unreachable and the Corefile at --out kept',
    1: "a host name did not resolve, the write failed, the API server was unreachable, or the role's names were still missing after --wait-timeout",
    2: 'a bad flag or value, an unreadable config file, kubeconfig or template, no usable upstream, or a request refused by RBAC',
    3: 'with --diff: the Corefile at --out, or a file beside it that it names, would change (the diff is printed); 0 when nothing would',
  };

  out = oneValue('--out', { description: 'Where to write the Corefile, atomically (- or absent: stdout)' });
  diff = Option.Boolean('--diff', false, { description: 'Show what would change in --out (and in the Gateway zone and weight files beside it) without writing' });
  dnsmasqOut = oneValue('--dnsmasq-out', { description: "Also write the node dnsmasq's drop-in and api-int hosts file from the same data, after the Corefile (see render-dnsmasq); needs --out and --listen; not with --diff" });
  ifUnreachable = oneValue('--if-unreachable', { description: 'keep: when the API server cannot be read within --wait-timeout, leave a Corefile at --out that passes the check as it is and exit 0 (default fail)' });

  override checkFlags(): void {
    super.checkFlags();
    if (this.out !== undefined) validatePath('--out', this.out);
    if (this.dnsmasqOut !== undefined) {
      validatePath('--dnsmasq-out', this.dnsmasqOut);
      dnsmasqHostsDir(this.dnsmasqOut, '--dnsmasq-out');
    }
  }

  override async execute(): Promise<number> {
    return renderCorefileCommand({
      ...this.inputs({ out: this.out }),
      diff: this.diff,
      dnsmasqOut: this.dnsmasqOut,
      ifUnreachable: this.ifUnreachable,
      cluster: this.clusterSource(),
    });
  }
}
