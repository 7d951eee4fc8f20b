import { Command, Option } from 'clipanion';
import { parseFields, updateInfraStatusCommand } from '../lib/commands/update-infra-status.js';
import { parseListenAddress } from '../lib/runtime/health-server.js';
import { ClusterCommand } from './options.js';

export class UpdateInfraStatusCommand extends ClusterCommand {
  static override paths = [['update-infra-status']];
  static override usage = Command.Usage({
    description: 'Publish the LB IPs into infrastructures.config.openshift.io/cluster status.platformStatus.<platform>.cloudLoadBalancerConfig',
    details: 'Sets dnsType: ClusterHosted with the first write, refuses a cluster already set to PlatformDefault (immutable), writes only the lists it owns (--fields) and only when they differ as sets.',
    examples: [
      ['Publish once', 'lbdns update-infra-status --kubeconfig ~/.kube/config'],
      ['See the patch without sending it', 'lbdns update-infra-status --kubeconfig ~/.kube/config --dry-run'],
      ['Beside the ingress operator, which owns ingressLoadBalancerIPs', 'lbdns update-infra-status --cluster --fields api,api-int --watch'],
    ],
  });

  fields = Option.String('--fields', 'api,api-int,ingress', { description: 'Which lists lbdns owns: a comma-separated subset of api,api-int,ingress' });
  dryRun = Option.Boolean('--dry-run', false, { description: 'Print the status patch instead of sending it' });
  watch = Option.Boolean('--watch', false, { description: 'Keep the status current as the sources change, until SIGTERM' });
  metricsAddr = Option.String('--metrics-addr', '127.0.0.1:18083', { description: 'HOST:PORT for /healthz, /readyz and /metrics (with --watch)' });

  override checkFlags(): void {
    super.checkFlags();
    parseFields(this.fields);
    parseListenAddress(this.metricsAddr);
  }

  override async execute(): Promise<number> {
    return updateInfraStatusCommand({
      ...this.inputs(),
      cluster: this.clusterFlags(),
      fields: this.fields,
      dryRun: this.dryRun,
      watch: this.watch,
      metricsAddr: this.metricsAddr,
    });
  }
}
