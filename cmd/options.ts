import { Command, Option } from 'clipanion';
import type { RawConfig } from '../lib/inputs/config.js';
import type { CommandInputs } from '../lib/commands/io.js';
import { parseNodeFlags } from '../lib/inputs/config.js';
import { DEFAULT_INGRESS_SERVICE, parseObjectRef, type ClusterFlags } from '../lib/commands/cluster.js';
import { LIMITS } from '../lib/model.js';
import { LB_FLAGS, validateRole, validateUpstreams } from '../lib/inputs/spec.js';
import { parseEndpoints, parseSeconds, validateDnsName, validateDomain, validateIp, validateTtl } from '../lib/grammar/validate.js';

/**
 * Clipanion's run() prints a failing command's error to stdout; keeping the error here lets
 * runCli print it to stderr and choose the exit code from its class.
 */
export abstract class LbdnsCommand extends Command {
  failure: unknown;

  override async catch(error: unknown): Promise<void> {
    this.failure = error;
  }
}

/** The inputs every command shares: a config file and/or flags describing the cluster. */
export abstract class InputCommand extends LbdnsCommand {
  config = Option.String('--config', { description: 'YAML or JSON file with the same settings; flags win over it' });
  example = Option.Boolean('--example', false, { description: 'Use the built-in example cluster (no cluster, no network)' });
  domain = Option.String('--domain', { description: "The cluster's base domain, e.g. mycluster.example.com" });
  role = Option.String('--role', { description: 'control-plane (default) or bootstrap (api-int only)' });
  apiLb = Option.Array('--api-lb', { description: 'External API LB: IP or hostname (repeatable)' });
  apiIntLb = Option.Array('--api-int-lb', { description: 'Internal API LB: IP or hostname (repeatable)' });
  ingressLb = Option.Array('--ingress-lb', { description: 'Ingress LB for *.apps: IP or hostname (repeatable)' });
  node = Option.Array('--node', { description: 'NAME=IP node record (repeatable; repeat a name for dual stack)' });
  upstream = Option.Array('--upstream', { description: 'Upstream resolver IP (repeatable); default: from --resolv-conf' });
  resolvConf = Option.String('--resolv-conf', { description: 'File the upstream resolvers come from (default /etc/resolv.conf)' });
  dnsServer = Option.Array('--dns-server', { description: 'IP[:PORT] lbdns asks for LB hostnames (repeatable); default: the upstreams, else the system resolvers' });
  template = Option.String('--template', { description: 'Eta template file to render instead of the built-in one' });
  ttl = Option.String('--ttl', { description: 'TTL of the served records in seconds (default 60)' });
  reloadInterval = Option.String('--reload-interval', { description: 'CoreDNS reload interval, >= 2s (default 2s)' });
  reloadJitter = Option.String('--reload-jitter', { description: 'CoreDNS reload jitter, >= 1s (default 1s)' });

  /**
   * Checks each flag value that can be judged alone, before any file, DNS or API call, so a
   * typo fails at once instead of after waiting --wait-timeout for the cluster. Values that
   * depend on each other or on a --config file are checked later, once merged. The tests run
   * it on the args of every shipped manifest.
   */
  checkFlags(): void {
    if (this.role !== undefined) validateRole(this.role);
    if (this.domain !== undefined) validateDomain('--domain', this.domain);
    if (this.ttl !== undefined) validateTtl('--ttl', this.ttl);
    if (this.reloadInterval !== undefined) parseSeconds('--reload-interval', this.reloadInterval, LIMITS.minReloadInterval, LIMITS.maxReloadInterval);
    if (this.reloadJitter !== undefined) parseSeconds('--reload-jitter', this.reloadJitter, LIMITS.minReloadJitter, LIMITS.maxReloadInterval);
    if (this.apiLb !== undefined) parseEndpoints(LB_FLAGS.api, this.apiLb);
    if (this.apiIntLb !== undefined) parseEndpoints(LB_FLAGS['api-int'], this.apiIntLb);
    if (this.ingressLb !== undefined) parseEndpoints(LB_FLAGS.ingress, this.ingressLb);
    for (const [name, ips] of Object.entries(parseNodeFlags(this.node ?? []))) {
      validateDnsName('--node', name);
      for (const ip of ips) validateIp(`--node ${name}`, ip);
    }
    if (this.upstream !== undefined) validateUpstreams('--upstream', this.upstream);
  }

  /** Clipanion runs this in place of execute(); what it throws reaches catch() like execute's errors. */
  override async validateAndExecute(): Promise<number> {
    this.checkFlags();
    return super.validateAndExecute();
  }

  /** The flags as a config, so they merge with a file field by field. */
  /** What every command's lib function takes from the shared flags; `extra` adds the command's own settings. */
  protected inputs(extra: RawConfig = {}): CommandInputs {
    return { configFile: this.config, example: this.example, flags: { ...this.flagConfig(), ...extra }, io: this.context };
  }

  protected flagConfig(): RawConfig {
    return {
      domain: this.domain,
      role: this.role,
      loadBalancers: { api: this.apiLb, apiInt: this.apiIntLb, ingress: this.ingressLb },
      nodes: this.node === undefined ? undefined : parseNodeFlags(this.node),
      upstreams: this.upstream,
      resolvConf: this.resolvConf,
      dnsServers: this.dnsServer,
      template: this.template,
      ttl: this.ttl,
      reload: { interval: this.reloadInterval, jitter: this.reloadJitter },
    };
  }
}

/** Commands that can read the cluster: kubeconfig and where the sources live. */
export abstract class ClusterCommand extends InputCommand {
  kubeconfigArg = Option.String({ required: false, name: 'kubeconfig' });
  kubeconfig = Option.String('--kubeconfig', { description: 'Kubeconfig file (or the positional argument, KUBECONFIG, or the pod service account)' });
  cluster = Option.Boolean('--cluster', false, { description: 'Read the cluster through KUBECONFIG or the pod service account' });
  ingressService = Option.String('--ingress-service', DEFAULT_INGRESS_SERVICE, { description: 'NAMESPACE/NAME of the router Service whose LB status gives the ingress IPs' });
  lbConfig = Option.String('--lb-config', { description: 'NAMESPACE/NAME of the LB config ConfigMap (default openshift-<platform>-infra/lbconfigfordns)' });
  waitTimeout = Option.String('--wait-timeout', '5m', { description: 'How long to wait for the cluster and the required LB data' });

  override checkFlags(): void {
    super.checkFlags();
    this.clusterFlags();
    parseObjectRef('--ingress-service', this.ingressService);
    if (this.lbConfig !== undefined) parseObjectRef('--lb-config', this.lbConfig);
  }

  protected clusterFlags(): ClusterFlags {
    return {
      kubeconfig: this.kubeconfig ?? this.kubeconfigArg,
      ingressService: this.ingressService,
      lbConfig: this.lbConfig,
      waitTimeoutMs: parseSeconds('--wait-timeout', this.waitTimeout, 1, 86400) * 1000,
    };
  }

  /** The cluster to read when a kubeconfig is named or --cluster given; otherwise the command works from flags and files alone. */
  protected clusterSource(): ClusterFlags | undefined {
    return this.cluster || this.kubeconfig !== undefined || this.kubeconfigArg !== undefined ? this.clusterFlags() : undefined;
  }
}
