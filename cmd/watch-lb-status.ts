import { Command, Option } from 'clipanion';
import { watchLbStatusCommand } from '../lib/commands/watch-lb-status.js';
import { parseListenAddress } from '../lib/runtime/health-server.js';
import { ClusterCommand } from './options.js';

export class WatchLbStatusCommand extends ClusterCommand {
  static override paths = [['watch-lb-status']];
  static override usage = Command.Usage({
    description: 'Keep the Corefile current: watch the cluster, re-resolve LB hostnames as their TTLs expire, rewrite only on change',
    details: 'Runs until SIGTERM or SIGINT. Serves /healthz, /readyz (ready after the first complete render) and /metrics on --metrics-addr.',
    examples: [['The monitor container', 'lbdns watch-lb-status /var/lib/kubelet/kubeconfig --out /etc/coredns/Corefile']],
  });

  out = Option.String('--out', { description: 'The Corefile CoreDNS reads; rewritten atomically on change' });
  metricsAddr = Option.String('--metrics-addr', '127.0.0.1:18082', { description: 'HOST:PORT for /healthz, /readyz and /metrics' });

  override checkFlags(): void {
    super.checkFlags();
    parseListenAddress(this.metricsAddr);
  }

  override async execute(): Promise<number> {
    return watchLbStatusCommand({
      ...this.inputs({ out: this.out }),
      cluster: this.clusterFlags(),
      metricsAddr: this.metricsAddr,
    });
  }
}
