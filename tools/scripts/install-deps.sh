#!/usr/bin/env bash
# Install every Debian 12 package roxe needs, and nothing more.
# Idempotent and non-interactive: when all packages are present it only
# checks (a second run takes well under a second); it waits on the apt/dpkg
# lock instead of failing when another apt is running.
set -euo pipefail

# One package per need; grouped by what uses it.
pkgs=(
	# build: user space, BPF, skeletons
	make gcc clang llvm libbpf-dev libxdp-dev bpftool pkg-config
	# fuzzing: libFuzzer and the sanitizer runtimes for clang
	libclang-rt-14-dev
	# libraries: CRC-32 (PCLMUL), captures, rtnetlink (address events)
	libdeflate-dev libpcap-dev libnl-route-3-dev
	# network namespaces, captures, XDP inspection
	iproute2 tcpdump xdp-tools ethtool iputils-ping
	# RDMA uAPI headers, libibverbs utilities, perftest (interop peers)
	rdma-core libibverbs-dev ibverbs-utils perftest rdmacm-utils
	# kernel: headers and image in one call (same ABI), kselftest harness
	linux-headers-amd64 linux-image-amd64 linux-source-6.1 kmod
	# make install's dkms.conf: install_test.sh runs dkms add/build; strace:
	# kmod_install.sh checks roxed's system calls against its unit's filter
	dkms strace
	# VM harness: the real peer (kernel rxe) runs under QEMU
	qemu-system-x86 busybox-static cpio xz-utils
	# tests: independent ICRC check, TAP runner; lib.mk copies TEST_PROGS with rsync;
	# the tools' --json output (and make bench's parsing) through jq; man pages
	# rendered by groff
	python3 perl rsync jq groff-base
	# make bench: kernel TCP baselines (ping-pong, bandwidth) and the plot
	sockperf iperf3 gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	case "$p" in \#*) continue ;; esac
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = "ii" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: sudo $0)" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=600 --no-install-recommends)
# Refresh package lists once if they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -n1)" ]; then
	apt-get -q -o DPkg::Lock::Timeout=600 update
fi
apt-get install "${apt_opts[@]}" "${missing[@]}"
