import { Command } from 'clipanion';
import { watchLbStatusCommand } from '../lib/commands/watch-lb-status.js';
import { validatePath } from '../lib/grammar/validate.js';
import { parseListenAddress } from '../lib/runtime/health-server.js';
import { ClusterCommand, oneValue } from './options.js';
import { dnsmasqHostsDir } from '../lib/sinks/dnsmasq-output.js';

export class WatchLbStatusCommand extends ClusterCommand {
  static override paths = [['watch-lb-status']];
  static override usage = Command.Usage({
    description: 'Keep the Corefile current until SIGTERM (the monitor)',
    details: 'Watches the cluster, re-resolves LB host names as their TTLs expire and rewrites the Corefile only when it changes. Runs until SIGTERM or SIGINT. Serves /healthz, /readyz (ready after the first complete render) and /metrics on --metrics-addr.',
    examples: [['The monitor container', 'lbdns watch-lb-status /var/lib/kubelet/kubeconfig --out /etc/coredns/Corefile']],
  });

  static override exitCodes = {
    0: 'stopped by SIGTERM or SIGINT',
    1: 'an unexpected failure while starting; it waits for the cluster and the LB data without a limit (--wait-timeout does not apply), and failed writes, watches and lookups are logged, counted in /metrics and retried',
    2: 'while starting only, as render-corefile, or a --metrics-addr it cannot listen on',
  };

  out = oneValue('--out', { description: 'The Corefile CoreDNS reads; rewritten atomically on change' });
  dnsmasqOut = oneValue('--dnsmasq-out', { description: "Also keep the node dnsmasq's drop-in current (see render-dnsmasq); needs --listen" });
  metricsAddr = oneValue('--metrics-addr', '127.0.0.1:18082', { description: 'Where /healthz, /readyz and /metrics listen (default 127.0.0.1:18082)' });

  override checkFlags(): void {
    super.checkFlags();
    if (this.out !== undefined) validatePath('--out', this.out);
    if (this.dnsmasqOut !== undefined) {
      validatePath('--dnsmasq-out', this.dnsmasqOut);
      dnsmasqHostsDir(this.dnsmasqOut, '--dnsmasq-out');
    }
    parseListenAddress(this.metricsAddr);
  }

  override async execute(): Promise<number> {
    return watchLbStatusCommand({
      ...this.inputs({ out: this.out }),
      cluster: this.clusterFlags(),
      metricsAddr: this.metricsAddr,
      dnsmasqOut: this.dnsmasqOut,
    });
  }
}
