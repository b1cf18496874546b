#!/usr/bin/env bash
# Set up everything xfer needs on a fresh Debian machine (idempotent).
# System packages: iproute2/iptables/nftables/ethtool for the emulated testbed, a C compiler and
# libnetfilter-queue-dev for its delay line, iperf3 and GridFTP as benchmark peers, openssh-server
# for the campaign tests. Python packages: torch pinned to the CPU build on disk, then xfer itself.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS="iproute2 iptables nftables ethtool iputils-ping gcc make libnetfilter-queue-dev libmnl-dev \
iperf3 openssh-server openssh-client globus-gridftp-server-progs globus-gass-copy-progs"
missing=""
for p in $APT_PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing system packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: please install these Debian packages (as root):$missing" >&2
  fi
fi

PIP="python3 -m pip"
$PIP install -q --disable-pip-version-check "torch==2.13.0"
$PIP install -q --disable-pip-version-check -e ".[dev,campaign,ray]"
echo "setup: done ($(python3 -c 'import xfer; print("xfer", xfer.__version__)'))"
