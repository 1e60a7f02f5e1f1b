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
	# the RDMA software people run on roxe0 (VM tests): UCX, Open MPI over
	# UCX (mpicc builds our MPI test), qperf, fio's rdma engine
	ucx-utils libucx0 openmpi-bin libopenmpi-dev qperf fio
	# kernel: headers and image in one call (same ABI), kselftest harness
	linux-headers-amd64 linux-image-amd64 linux-source-6.1 kmod
	# make install's dkms.conf: install_test.sh runs dkms add/build; strace:
	# kmod_install.sh checks roxed's system calls against its unit's filter
	dkms strace
	# VM harness: the real peer (kernel rxe) runs under QEMU; zstd
	# unpacks 6.12's bzImage
	qemu-system-x86 busybox-static cpio xz-utils zstd
	# tests: independent ICRC check, TAP runner; lib.mk copies TEST_PROGS with rsync;
	# the tools' --json output (and make bench's parsing) through jq; man pages
	# rendered by groff
	python3 perl rsync jq groff-base
	# make bench: kernel TCP baselines (ping-pong, bandwidth) and the plot;
	# perf for its per-frame budget (bench-budget.sh)
	sockperf iperf3 gnuplot-nox linux-perf
)

# The second VM guest kernel, from bookworm-backports (the suite is added
# below when missing): exact names, so that every machine boots the same
# 6.12 that roxe.ko was tested on (tools/vm/README.md).
bpo_suite=bookworm-backports
bpo_pkgs=(linux-image-6.12.95+deb12-amd64 linux-headers-6.12.95+deb12-amd64)

installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)
	[ "${st:0:2}" = "ii" ]
}

missing=()
for p in "${pkgs[@]}" "${bpo_pkgs[@]}"; do
	case "$p" in \#*) continue ;; esac
	installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: sudo $0)" >&2
	exit 1
fi

# The enabled apt sources as "URI SUITE KEYRING" lines, from the deb822
# files (*.sources) and the one-line files (sources.list, *.list); binary
# ("deb") entries only.
apt_sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && enabled != "no")
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
					print uris[i], suites[j], (key == "" ? "-" : key)
			types = ""; enabled = ""; key = ""; nu = 0; ns = 0
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		{
			k = tolower($1); sub(/:$/, "", k); $1 = ""; sub(/^ +/, "")
			if (k == "types") types = $0
			else if (k == "enabled") enabled = tolower($0)
			else if (k == "signed-by") key = $0
			else if (k == "uris") nu = split($0, uris, " ")
			else if (k == "suites") ns = split($0, suites, " ")
		}
		END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			key = "-"; i = 2
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
					if ($i ~ /\]$/) break
				}
				i++
			}
			print $i, $(i + 1), key
		}' "$f"
	done
}

# bookworm-backports on the mirror(s) the machine already uses for bookworm:
# their URIs and keyring, never a host name of ours.
add_backports() {
	local uris=() key='' uri suite k f=/etc/apt/sources.list.d/roxe-$bpo_suite.sources
	while read -r uri suite k; do
		[ "$suite" = "$bpo_suite" ] && return 1	# already there
		[ "$suite" = bookworm ] || continue
		uris+=("$uri")
		case "$k" in /*) key=$k ;; esac	# a keyring file, not an inline key
	done < <(apt_sources)
	[ ${#uris[@]} -gt 0 ] || {
		echo "install-deps: no apt source for bookworm to take $bpo_suite's mirror from" >&2
		exit 1
	}
	echo "install-deps: adding $bpo_suite (${uris[*]}) in $f"
	{
		echo "Types: deb"
		echo "URIs: ${uris[*]}"
		echo "Suites: $bpo_suite"
		echo "Components: main"
		[ -z "$key" ] || echo "Signed-By: $key"
	} >"$f"
}

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=600 --no-install-recommends)
# Refresh package lists once if they are missing or older than a day, or
# when bookworm-backports was just added.
if add_backports; then
	apt-get -q -o DPkg::Lock::Timeout=600 update
elif [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | sed -n 1p)" ]; then
	apt-get -q -o DPkg::Lock::Timeout=600 update
fi
apt-get install "${apt_opts[@]}" "${missing[@]}"
