import { Command, Option, UsageError } from 'clipanion';
import { ConfigError, type ExitCode } from '../lib/errors.js';
import type { RawConfig } from '../lib/inputs/config.js';
import type { CommandInputs } from '../lib/commands/io.js';
import { parseNodeFlags } from '../lib/inputs/config.js';
import { DEFAULT_INGRESS_SERVICE, parseObjectRef, type ClusterFlags } from '../lib/commands/cluster.js';
import { DEFAULTS, LIMITS } from '../lib/model.js';
import { LB_FLAGS, validateGatewayFlags, validateRole, validateUpstreams } from '../lib/inputs/spec.js';
import { parseEndpoints, validateDnsName, validateDomain, validateIp, validatePath, validateTtl } from '../lib/grammar/validate.js';
import { parseDurationMs } from '../lib/grammar/go-duration.js';
import { validateListen, validatePort } from '../lib/grammar/host-port.js';

interface OptionState {
  readonly options: readonly { readonly name: string }[];
}

interface StringFlag {
  readonly description: string;
}

/**
 * Option.String refusing a flag given twice: clipanion keeps the last value without a word,
 * so `--ttl 30 --ttl 40` would serve 40 while the admin reads 30 in the manifest.
 */
export function oneValue(descriptor: string, opts: StringFlag): string | undefined;
export function oneValue(descriptor: string, initial: string, opts: StringFlag): string;
export function oneValue(descriptor: string, ...rest: [StringFlag] | [string, StringFlag]): string | undefined {
  const option = (Option.String as (...args: unknown[]) => { transformer: (builder: unknown, key: string, state: OptionState, context: unknown) => unknown })(descriptor, ...rest);
  const names = new Set(descriptor.split(','));
  const transformer = option.transformer;
  option.transformer = (builder, key, state, context) => {
    const given = state.options.filter((o) => names.has(o.name));
    if (given.length > 1) throw new UsageError(`${(given[0] as { name: string }).name} is given ${given.length} times; it takes one value`);
    return transformer(builder, key, state, context);
  };
  // Clipanion reads the option from the field this lands in, whatever its declared type.
  return option as unknown as string | undefined;
}

/**
 * Clipanion's run() prints a failing command's error to stdout; keeping the error here lets
 * runCli print it to stderr and choose the exit code from its class.
 */
export abstract class LbdnsCommand extends Command {
  /** What each exit code means for this command; its --help lists them. */
  static exitCodes: ExitCodes = {};

  failure: unknown;

  override async catch(error: unknown): Promise<void> {
    this.failure = error;
  }
}

export type ExitCodes = Partial<Record<ExitCode, string>>;

/** --example, for the commands that can show or check the built-in example cluster. */
export const exampleOption = (): boolean => Option.Boolean('--example', false, { description: 'Use the built-in example cluster (no cluster, no network)' });

/** The inputs every command shares: a config file and/or flags describing the cluster. */
export abstract class InputCommand extends LbdnsCommand {
  config = oneValue('--config', { description: 'YAML or JSON file with the same settings' });
  /** Offered (exampleOption) by the commands that work on the example cluster; the monitor watches a real one. */
  example = false;
  domain = oneValue('--domain', { description: "The cluster's base domain, e.g. mycluster.example.com" });
  role = oneValue('--role', { description: 'What this node serves: control-plane and worker everything, bootstrap api-int and *.apps, apps-only *.apps (default control-plane)' });
  apiLb = Option.Array('--api-lb', { description: 'The external API load balancer (repeatable)' });
  apiIntLb = Option.Array('--api-int-lb', { description: 'The internal API load balancer (repeatable)' });
  ingressLb = Option.Array('--ingress-lb', { description: 'The ingress load balancer, for *.apps (repeatable)' });
  node = Option.Array('--node', { description: 'A node record (repeatable; repeat a name for dual stack)' });
  upstream = Option.Array('--upstream', { description: 'An upstream resolver (repeatable; default: from --resolv-conf)' });
  resolvConf = oneValue('--resolv-conf', { description: 'File the upstream resolvers come from (default /etc/resolv.conf)' });
  dnsServer = Option.Array('--dns-server', { description: 'Where lbdns resolves LB host names (repeatable; default: the upstreams, else the system resolvers)' });
  template = oneValue('--template', { description: 'Eta template file to render instead of the built-in one' });
  ttl = oneValue('--ttl', { description: 'TTL of the served records (default 60)' });
  reloadInterval = oneValue('--reload-interval', { description: 'CoreDNS reload interval, at least 2s (default 2s)' });
  listen = oneValue('--listen', { description: "Where CoreDNS answers, [ADDR]:PORT (default :53: every address); e.g. :5353 behind the node's dnsmasq" });
  reloadJitter = oneValue('--reload-jitter', { description: 'CoreDNS reload jitter, at least 1s (default 1s)' });
  healthPort = oneValue('--health-port', { description: "Port of CoreDNS's /health endpoint (default 18080)" });
  readyPort = oneValue('--ready-port', { description: "Port of CoreDNS's /ready endpoint (default 18181)" });

  /**
   * Checks each flag value that can be judged alone, before any file, DNS or API call, so a
   * typo fails at once instead of after waiting --wait-timeout for the cluster. Values that
   * depend on each other or on a --config file are checked later, once merged. The tests run
   * it on the args of every shipped manifest.
   */
  checkFlags(): void {
    for (const [flag, path] of [['--config', this.config], ['--template', this.template], ['--resolv-conf', this.resolvConf]] as const) {
      if (path !== undefined) validatePath(flag, path);
    }
    if (this.role !== undefined) validateRole(this.role);
    if (this.domain !== undefined) validateDomain('--domain', this.domain);
    if (this.ttl !== undefined) validateTtl('--ttl', this.ttl);
    if (this.reloadInterval !== undefined) parseDurationMs('--reload-interval', this.reloadInterval, LIMITS.minReloadInterval * 1000, LIMITS.maxReloadInterval * 1000);
    if (this.reloadJitter !== undefined) parseDurationMs('--reload-jitter', this.reloadJitter, LIMITS.minReloadJitter * 1000, LIMITS.maxReloadInterval * 1000);
    if (this.apiLb !== undefined) parseEndpoints(LB_FLAGS.api, this.apiLb);
    if (this.apiIntLb !== undefined) parseEndpoints(LB_FLAGS['api-int'], this.apiIntLb);
    if (this.ingressLb !== undefined) parseEndpoints(LB_FLAGS.ingress, this.ingressLb);
    for (const [name, ips] of Object.entries(parseNodeFlags(this.node ?? []))) {
      validateDnsName('--node', name);
      for (const ip of ips) validateIp(`--node ${name}`, ip);
    }
    if (this.upstream !== undefined) validateUpstreams('--upstream', this.upstream);
    const health = this.healthPort === undefined ? DEFAULTS.healthPort : validatePort('--health-port', this.healthPort);
    const ready = this.readyPort === undefined ? DEFAULTS.readyPort : validatePort('--ready-port', this.readyPort);
    if (this.listen !== undefined) validateListen('--listen', this.listen, { health, ready });
  }

  /** Clipanion runs this in place of execute(); what it throws reaches catch() like execute's errors. */
  override async validateAndExecute(): Promise<number> {
    this.checkFlags();
    return super.validateAndExecute();
  }

  /** What every command's lib function takes from the shared flags; `extra` adds the command's own settings. */
  protected inputs(extra: RawConfig = {}): CommandInputs {
    return { configFile: this.config, example: this.example, flags: { ...this.flagConfig(), ...extra }, io: this.context };
  }

  /** The flags as a config, so they merge with a file field by field. */
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
      listen: this.listen,
      healthPort: this.healthPort,
      readyPort: this.readyPort,
    };
  }
}

/** Commands that can read the cluster: kubeconfig and where the sources live. */
export abstract class ClusterCommand extends InputCommand {
  kubeconfigArg = Option.String({ required: false, name: 'kubeconfig' });
  kubeconfig = oneValue('--kubeconfig', { description: 'Read the cluster with this kubeconfig (same as the KUBECONFIG argument)' });
  cluster = Option.Boolean('--cluster', false, { description: 'Read the cluster through KUBECONFIG or the pod service account' });
  ingressService = oneValue('--ingress-service', DEFAULT_INGRESS_SERVICE, { description: 'The router Service whose LB status gives the ingress IPs (default openshift-ingress/router-default)' });
  lbConfig = oneValue('--lb-config', { description: 'The LB config ConfigMap (default openshift-infra/openshift-lb-config)' });
  waitTimeout = oneValue('--wait-timeout', '5m', { description: 'How long to wait for the cluster and the LB data the role needs (default 5m; watch-lb-status waits without a limit)' });
  apiPort = oneValue('--api-port', { description: 'On-prem: the port where a move of api-int is checked for a kube-apiserver (default 6443)' });
  apiIntSeed = Option.Array('--api-int-seed', { description: "Where to reach the API server when the kubeconfig names api-int and no Corefile serves it yet (a node's first boot): the internal API LB's IP or host name (repeatable); never served" });
  ignoreDnsType = Option.Boolean('--ignore-dns-type', false, { description: "Serve names even where the Infrastructure's cloudLoadBalancerConfig.dnsType is not ClusterHosted (PlatformDefault, the cloud's DNS, or not set)" });
  gatewayZone = Option.Array('--gateway-zone', { description: 'Serve Gateway DNS (Kuadrant DNSRecords, DNSPolicies of Gateways) for names in this zone (repeatable)' });
  geoCode = oneValue('--geo-code', { description: "This cluster's geos for load-balanced Gateway names, most wanted first, as the DNSPolicies write them, any case: e.g. IE,GEO-EU (default: the default geo)" });
  gatewayTtl = oneValue('--gateway-ttl', { description: "TTL of a DNSPolicy's simple records, leaves and weighted CNAMEs, as Kuadrant's DNS_DEFAULT_TTL (default 60)" });
  gatewayLbTtl = oneValue('--gateway-lb-ttl', { description: "TTL of a load-balanced DNSPolicy's host and geo CNAMEs, as Kuadrant's DNS_DEFAULT_LB_TTL (default 300)" });

  override checkFlags(): void {
    super.checkFlags();
    if (this.kubeconfig !== undefined) validatePath('--kubeconfig', this.kubeconfig);
    if (this.kubeconfigArg !== undefined) validatePath('KUBECONFIG argument', this.kubeconfigArg);
    if (this.kubeconfig !== undefined && this.kubeconfigArg !== undefined) throw new ConfigError('--kubeconfig and the KUBECONFIG argument are both given; give the kubeconfig once');
    validateGatewayFlags({ zones: this.gatewayZone, geoCode: this.geoCode, ttl: this.gatewayTtl, lbTtl: this.gatewayLbTtl });
    this.clusterFlags();
    parseObjectRef('--ingress-service', this.ingressService);
    if (this.lbConfig !== undefined) parseObjectRef('--lb-config', this.lbConfig);
  }

  protected clusterFlags(): ClusterFlags {
    return {
      kubeconfig: this.kubeconfig ?? this.kubeconfigArg,
      ingressService: this.ingressService,
      lbConfig: this.lbConfig,
      waitTimeoutMs: parseDurationMs('--wait-timeout', this.waitTimeout, 1000, 86_400_000),
      ignoreDnsType: this.ignoreDnsType,
      apiPort: this.apiPort === undefined ? undefined : validatePort('--api-port', this.apiPort),
      ...(this.apiIntSeed === undefined ? {} : { apiIntSeed: parseEndpoints('--api-int-seed', this.apiIntSeed) }),
    };
  }

  protected override flagConfig(): RawConfig {
    return { ...super.flagConfig(), gatewayZones: this.gatewayZone, geoCode: this.geoCode, gatewayTtl: this.gatewayTtl, gatewayLbTtl: this.gatewayLbTtl };
  }

  /** The cluster to read when a kubeconfig is named or --cluster given; otherwise the command works from flags and files alone. */
  protected clusterSource(): ClusterFlags | undefined {
    return this.cluster || this.kubeconfig !== undefined || this.kubeconfigArg !== undefined ? this.clusterFlags() : undefined;
  }
}
