import { Command, Option } from 'clipanion';
import { parseFields, updateInfraStatusCommand } from '../lib/commands/update-infra-status.js';
import { parseListenAddress } from '../lib/runtime/health-server.js';
import { ClusterCommand, oneValue } from './options.js';

export class UpdateInfraStatusCommand extends ClusterCommand {
  // Offered to be refused with the reason, rather than as an unknown option.
  override example = Option.Boolean('--example', false, { description: "Refused: the built-in example cluster's addresses must never be published into a real cluster" });
  static override paths = [['update-infra-status']];
  static override usage = Command.Usage({
    description: 'Publish the LB IPs into the Infrastructure status',
    details: 'Writes status.platformStatus.<platform>.cloudLoadBalancerConfig of infrastructures.config.openshift.io/cluster. Publishes where dnsType is ClusterHosted; where it is not set, only with --set-dns-type-cluster-hosted, which sets it with the first write, for good (immutable); refuses PlatformDefault; writes only the lists it owns (--fields) and only when they differ as sets.',
    examples: [
      ['Publish once', 'lbdns update-infra-status --kubeconfig ~/.kube/config'],
      ['See the patch, checked by the API server but not stored', 'lbdns update-infra-status --kubeconfig ~/.kube/config --dry-run'],
      ['Beside the ingress operator, which owns ingressLoadBalancerIPs', 'lbdns update-infra-status --cluster --fields api,api-int --watch'],
    ],
  });

  static override exitCodes = {
    0: 'published, or already up to date',
    1: 'API failures after retries, or the owned names still missing after --wait-timeout',
    2: 'a bad flag or value, --example, no or an unreadable kubeconfig, a platform other than AWS, GCP and Azure; dnsType is PlatformDefault, or not set without --set-dns-type-cluster-hosted; a list over 16 IPs, a CRD with no field for the lists, the API server refused the patch, no Infrastructure, or RBAC refused',
  };

  fields = oneValue('--fields', 'api,api-int,ingress', { description: 'The lists lbdns owns: a comma-separated subset of api,api-int,ingress (default all three)' });
  dryRun = Option.Boolean('--dry-run', false, { description: 'Print the status patch and have the API server check it (dryRun=All) instead of storing it' });
  watch = Option.Boolean('--watch', false, { description: 'Keep the status current as the sources change, until SIGTERM' });
  setDnsType = Option.Boolean('--set-dns-type-cluster-hosted', false, { description: "Where the cluster's cloudLoadBalancerConfig.dnsType is not set, set it to ClusterHosted with the first write: the cluster's DNS is then the cluster's own, for good (the field is immutable)" });
  metricsAddr = oneValue('--metrics-addr', '127.0.0.1:18083', { description: 'Where /healthz, /readyz and /metrics listen, with --watch (default 127.0.0.1:18083)' });

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
      setDnsType: this.setDnsType,
      metricsAddr: this.metricsAddr,
    });
  }
}
