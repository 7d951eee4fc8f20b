#!/usr/bin/env bash
# Installs the Debian tools some tests use, only when they are missing (promtool: the
# prometheus package, for the alert rules and /metrics checks; shellcheck, for the node's
# NetworkManager script; dnsmasq, for the drop-in lbdns renders for the node's dnsmasq;
# openssl, for the certificates of the TLS tests; dnsperf, for make bench's CoreDNS throughput;
# systemd, whose systemd-analyze verifies the on-prem layout's units).
set -euo pipefail
need=()
command -v named-checkzone >/dev/null 2>&1 || need+=(bind9-utils)
command -v nsupdate >/dev/null 2>&1 || need+=(bind9-dnsutils)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v dnsmasq >/dev/null 2>&1 || [ -x /usr/sbin/dnsmasq ] || need+=(dnsmasq-base)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v dnsperf >/dev/null 2>&1 || need+=(dnsperf)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing ${need[*]} and cannot apt-get them here; the tests that use them will fail" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
