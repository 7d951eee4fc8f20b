/**
 * A small Corefile in the shipped shape, for the tests that break one thing in it: the
 * structural check's (corefile-check.test.ts) and real CoreDNS's (corefile-check-coredns.test.ts).
 */
import * as assert from 'uvu/assert';

export const GOOD = `. {
    errors
    template ANY A api.c1.example.com {
        match ^api\\.c1\\.example\\.com\\.$
        answer "{{ .Name }} 60 IN A 10.0.0.10"
        fallthrough
    }
    template ANY AAAA api.c1.example.com {
        match ^api\\.c1\\.example\\.com\\.$
        answer "{{ .Name }} 60 IN AAAA fd00::10"
        fallthrough
    }
    hosts /dev/null {
        10.0.0.5 master-0 master-0.c1.example.com
        ttl 60
        fallthrough
    }
    forward . 10.0.0.2 10.0.0.3 {
        policy sequential
    }
    cache 30
    reload 2s 1s
}
`;

/** GOOD with `from` replaced by `to`; `from` must be in it. */
export function replaced(from: string, to: string): string {
  assert.ok(GOOD.includes(from), `fixture contains ${JSON.stringify(from)}`);
  return GOOD.replace(from, to);
}

