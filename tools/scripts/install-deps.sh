#!/usr/bin/env bash
# Install the Debian 12 packages roxe needs, and nothing more.
#
#   tools/scripts/install-deps.sh [--for demo|bench|check] ...   default: all
#
# --for NAME installs what make NAME needs (repeatable): demo builds roxe
# and runs two engines over veth; bench adds the baselines and plots;
# check adds the tests and the VM harness. No kernel is installed and no apt
# source is added: the VM guests' kernels are fetched into build/vm/kernels/
# (tools/vm/fetch-kernels.sh, make kernels), so the host boots as it did.
# Idempotent and non-interactive: when all packages are present it only
# checks (a second run takes well under a second); it prints what it will
# install first, and waits on the apt/dpkg lock instead of failing when
# another apt is running.
set -euo pipefail

# One package per need; grouped by what uses it.
# make demo (tools/scripts/demo.sh): build, two namespaces, XDP, two engines
demo_pkgs=(
	# build: user space, BPF, skeletons
	make gcc clang llvm libbpf-dev libxdp-dev bpftool pkg-config
	# libraries: CRC-32 (PCLMUL), captures, rtnetlink (address events);
	# make's roxe-linger.so links libibverbs
	libdeflate-dev libpcap-dev libnl-route-3-dev libibverbs-dev
	# network namespaces (netns.sh pings); demo.sh reads bpftool's JSON
	iproute2 iputils-ping python3
)
# make bench and soak: the demo's, plus kernel TCP baselines (ping-pong,
# bandwidth), the plots, perf for the per-frame budget (bench-budget.sh),
# the tools' --json output through jq, the veths' offloads
bench_pkgs=(
	sockperf iperf3 gnuplot-nox linux-perf jq ethtool
)
# make check (every kselftest, the VM suite) and bench-vm: the demo's, plus
check_pkgs=(
	# fuzzing: libFuzzer and the sanitizer runtimes for clang
	libclang-rt-14-dev
	# captures, XDP inspection
	tcpdump xdp-tools ethtool
	# RDMA uAPI headers, libibverbs utilities, perftest (interop peers)
	rdma-core ibverbs-utils perftest rdmacm-utils
	# the RDMA software people run on roxe0 (VM tests): UCX, Open MPI over
	# UCX (mpicc builds our MPI test), qperf, fio's rdma engine
	ucx-utils libucx0 openmpi-bin libopenmpi-dev qperf fio
	# the kselftest harness (lib.mk, kselftest.h, runner.sh) is extracted
	# from this source tarball into build/: source only, nothing it
	# installs is booted. kmod: insmod in the guest image, depmod for the
	# fetched guest kernels (tools/vm/fetch-kernels.sh)
	linux-source-6.1 kmod
	# make install's dkms.conf: install_test.sh runs dkms add/build; strace:
	# kmod_install.sh checks roxed's system calls against its unit's filter
	dkms strace
	# packaging (make deb, deb_test.sh): dpkg-buildpackage, dh, dh_dkms, lintian
	dpkg-dev debhelper dh-dkms lintian
	# VM harness: the real peer (kernel rxe) runs under QEMU; zstd
	# unpacks 6.12's bzImage
	qemu-system-x86 busybox-static cpio xz-utils zstd
	# roxe.ko for trixie's guest kernels builds in a trixie chroot
	# (tools/vm/kbuild-chroot.sh): their kbuild needs trixie's gcc-14
	debootstrap
	# tests: independent ICRC check, TAP runner; lib.mk copies TEST_PROGS with rsync;
	# the tools' --json output through jq; man pages rendered by groff
	python3 perl rsync jq groff-base
)

want=()
[ $# -gt 0 ] || set -- --for demo --for bench --for check
while [ $# -gt 0 ]; do
	case "$1" in
	--for)
		case "${2:-}" in
		demo) want+=("${demo_pkgs[@]}") ;;
		bench) want+=("${demo_pkgs[@]}" "${bench_pkgs[@]}") ;;
		check) want+=("${demo_pkgs[@]}" "${check_pkgs[@]}") ;;
		*) echo "install-deps: --for demo, bench or check, not '${2:-}'" >&2; exit 2 ;;
		esac
		shift 2 ;;
	*) echo "usage: $0 [--for demo|bench|check] ..." >&2; exit 2 ;;
	esac
done

installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)
	[ "${st:0:2}" = "ii" ]
}

missing=()
declare -A seen=()
for p in "${want[@]}"; do
	[ -z "${seen[$p]:-}" ] || continue
	seen[$p]=1
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

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=600 --no-install-recommends)
# Refresh package lists once if they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | sed -n 1p)" ]; then
	apt-get -q -o DPkg::Lock::Timeout=600 update
fi
apt-get install "${apt_opts[@]}" "${missing[@]}"
