import type { NameRecord } from '../model.js';

/** One pair of CoreDNS `template` blocks (A and AAAA): the name it matches and the records it answers. */
export interface TemplateBlock {
  /** What the block serves, for the comment above it: the name and its source. */
  readonly comment: string;
  readonly zone: string;
  /** Anchored RE2 regex of the query names (lower case, with the trailing dot). */
  readonly match: string;
  /** The answer records of the A block, then the AAAA block. */
  readonly a: readonly string[];
  readonly aaaa: readonly string[];
}

const GO_NAME = '{{ .Name }}';

/**
 * A block pair per name of the cluster (api, api-int, `*.apps`, the ingress DNSRecords), in
 * the record set's order: the most specific first, as CoreDNS tries blocks in order. Gateway
 * names are not here: they are served from zone files (zone-file.ts).
 */
export function templateBlocks(names: readonly NameRecord[], clusterTtl: number): TemplateBlock[] {
  return names.map((n) => {
    const ttl = n.addressTtl ?? clusterTtl;
    return {
      comment: `${n.name} (${n.source})`,
      zone: n.zone,
      match: n.match,
      a: n.v4.map((ip) => `${GO_NAME} ${ttl} IN A ${ip}`),
      aaaa: n.v6.map((ip) => `${GO_NAME} ${ttl} IN AAAA ${ip}`),
    };
  });
}
