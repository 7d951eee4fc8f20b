#!/usr/bin/env bash
# Builds the real programs lbdns's tests drive, once per pinned version, into .peers/:
#   CoreDNS from its own module (its go.mod and go.sum, stock plugin.cfg), and
#   kube-apiserver + etcd from test/peers/kube-apiserver (our module over k8s.io/kubernetes).
# A binary already built for the same pins is kept, so a second run only prints versions.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
if ! command -v go >/dev/null 2>&1; then
  echo "make peers: Go is required to build the real CoreDNS and kube-apiserver the tests use (see README, Requirements)" >&2
  exit 1
fi

# OpenShift's current CoreDNS (openshift/coredns main) is based on CoreDNS 1.13.1.
COREDNS_VERSION=v1.13.1
KUBE_VERSION=$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' test/peers/kube-apiserver/go.mod)

coredns=.peers/coredns-$COREDNS_VERSION/coredns
if [ ! -x "$coredns" ]; then
  echo "make peers: building CoreDNS $COREDNS_VERSION (first time: a few minutes)" >&2
  GOBIN="$root/.peers/coredns-$COREDNS_VERSION" GOFLAGS=-trimpath go install "github.com/coredns/coredns@$COREDNS_VERSION"
fi

# The kube-apiserver binary is named for a hash of its module's files: any change rebuilds it.
src_hash=$(cat test/peers/kube-apiserver/go.mod test/peers/kube-apiserver/go.sum test/peers/kube-apiserver/*.go | sha256sum | cut -c1-12)
kube=.peers/kube-apiserver-$src_hash/kube-apiserver
if [ ! -x "$kube" ]; then
  echo "make peers: building kube-apiserver $KUBE_VERSION with embedded etcd (first time: several minutes)" >&2
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  pkg=k8s.io/component-base/version
  (cd test/peers/kube-apiserver && go build -trimpath \
    -ldflags "-X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
    -o "$root/$kube.tmp" .)
  mv "$kube.tmp" "$kube"
  # Builds of earlier sources are never used again.
  for old in .peers/kube-apiserver-*; do [ "$old" = ".peers/kube-apiserver-$src_hash" ] || rm -rf "$old"; done
fi

# Stable names for the tests.
mkdir -p .peers/bin
ln -sfn "../coredns-$COREDNS_VERSION/coredns" .peers/bin/coredns
ln -sfn "../kube-apiserver-$src_hash/kube-apiserver" .peers/bin/kube-apiserver
echo "peers: $(.peers/bin/coredns -version | head -1), $(.peers/bin/kube-apiserver -version)"
