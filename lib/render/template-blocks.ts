import type { NameRecord } from '../model.js';
import { emptyMatchFor, matchFor } from '../resolve/specificity.js';

/** One pair of CoreDNS `template` blocks (A and AAAA): the name it matches and the records it answers. */
export interface TemplateBlock {
  /** What the block serves, for the comment above it: the name and its source. */
  readonly comment: string;
  readonly zone: string;
  /** Anchored RE2 regex of the query names (lower case, with the trailing dot). */
  readonly match: string;
  /**
   * The names the block answers NODATA for, with the cluster's SOA, in every type it has no
   * records of: `match`'s, and a wildcard's apex, which exists as an empty name (RFC 4592).
   */
  readonly emptyMatch: string;
  /** The answer records of the A block, then the AAAA block. */
  readonly a: readonly string[];
  readonly aaaa: readonly string[];
}

const GO_NAME = '{{ .Name }}';

/** A name as a template sees it in `it.names`: with the zone and match of its block. */
export type TemplateName = NameRecord & { readonly zone: string; readonly match: string };

/** The names with their blocks' zone and match, for a custom template and `display`; made when asked, as 25,000 Gateway names never need them. */
export function templateNames(names: readonly NameRecord[]): TemplateName[] {
  return names.map((n) => ({ ...n, ...matchFor(n.name) }));
}

/**
 * A block pair per name of the cluster (api, api-int, `*.apps`, the ingress DNSRecords), in
 * the record set's order: the most specific first, as CoreDNS tries blocks in order. Gateway
 * names are not here: they are served from zone files (zone-file.ts).
 */
export function templateBlocks(names: readonly NameRecord[], clusterTtl: number): TemplateBlock[] {
  return names.map((n) => {
    const ttl = n.addressTtl ?? clusterTtl;
    // Made here, not kept with the record: a Gateway name, served from a zone file, never needs one.
    const { zone, match } = matchFor(n.name);
    return {
      comment: `${n.name} (${n.source})`,
      zone,
      match,
      emptyMatch: emptyMatchFor(n.name),
      a: n.v4.map((ip) => `${GO_NAME} ${ttl} IN A ${ip}`),
      aaaa: n.v6.map((ip) => `${GO_NAME} ${ttl} IN AAAA ${ip}`),
    };
  });
}
