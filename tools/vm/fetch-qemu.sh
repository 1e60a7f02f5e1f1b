#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# bookworm-backports' QEMU for the VM guests that Debian 12's QEMU 7.2
# cannot run: those with the emulated 82576 (`-device igb`, QEMU 8.0 on),
# on which igb's AF_XDP zero-copy (Linux 6.14 on) was developed (issue
# #37), and those with more than one vCPU (7.2's multi-threaded TCG runs
# stale kernel text after another vCPU patched it: run.sh). Fetched and
# unpacked, never installed: the host keeps its own QEMU 7.2, which every
# other VM run uses.
#
#   tools/vm/fetch-qemu.sh [-u]       prints the unpacked tree's root
#
# Packages: qemu-system-x86 (the binaries), qemu-system-data (pvh.bin,
# linuxboot_dma.bin and the other option ROMs) and seabios (its
# qemu-system-x86 wants a newer one than bookworm's), all of
# bookworm-backports, `dpkg-deb -x`ed into <kernels>/qemu/root/
# (<kernels>: build/vm/kernels/, or ROXE_VM_KERNELS), through the private
# apt configuration of tools/vm/fetch-kernels.sh (tools/vm/apt-private.sh,
# the same state directory). Everything else it links against is
# bookworm's and on the host (tools/scripts/install-deps.sh puts QEMU 7.2
# there): a library the binary cannot find fails the fetch. run.sh runs it
# with `-L <root>/usr/share/qemu -L <root>/usr/share/seabios`.
# Already there: nothing fetched (no network, a few ms); -u looks for a
# newer version.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kernels=${ROXE_VM_KERNELS:-$top/build/vm/kernels}
apt=$kernels/apt
suites=(bookworm bookworm-backports trixie-backports)
dest=$kernels/qemu
root=$dest/root
suite=bookworm-backports
pkgs=(qemu-system-x86 qemu-system-data seabios)

die() { echo "fetch-qemu: $*" >&2; exit 1; }
say() { echo "fetch-qemu: $*" >&2; }

update=0
if [ "${1:-}" = -u ]; then update=1; shift; fi
[ $# = 0 ] || die "usage: $0 [-u]"

# ready: unpacked and complete (the stamp, its versions, is written last)
ready() { [ -s "$dest/versions" ] && [ -x "$root/usr/bin/qemu-system-x86_64" ]; }

if [ $update = 0 ] && ready; then
	echo "$root"
	exit 0
fi

# shellcheck source=tools/vm/apt-private.sh
. "$here/apt-private.sh"

command -v dpkg-deb >/dev/null || die "dpkg-deb missing"
mkdir -p "$kernels"
# one fetch at a time, shared with fetch-kernels.sh (one apt state)
exec 9>"$kernels/.lock"
flock 9
if [ $update = 0 ] && ready; then
	echo "$root"
	exit 0
fi
setup_apt
update_lists

# version PKG: its newest version in $suite (apt-cache policy's table:
# a version line, then the archives that have it)
version() {
	aptc policy "$1" 2>/dev/null | awk -v s="$suite" '
		/^ +(\*\*\* )?[^ ]+ -?[0-9]+$/ { v = ($1 == "***" ? $2 : $1); next }
		/^ +-?[0-9]+ [a-z]+:/ && $3 ~ "^" s "/" && v != "" && !done { print v; done = 1 }'
}

want=()
total=0
for p in "${pkgs[@]}"; do
	v=$(version "$p")
	[ -n "$v" ] || die "no $p in $suite on the mirror"
	want+=("$p=$v")
done
if [ -s "$dest/versions" ] && [ "$(cat "$dest/versions")" = "$(printf '%s\n' "${want[@]}")" ]; then
	echo "$root"
	exit 0
fi
t0=$SECONDS
say "downloading from $suite:"
for w in "${want[@]}"; do
	size=$(aptc show "$w" 2>/dev/null | sed -n 's/^Size: //p' | sed -n 1p)
	total=$((total + ${size:-0}))
	printf '    %-24s %-34s %5d KiB\n' "${w%%=*}" "${w#*=}" $((${size:-0} >> 10)) >&2
done
say "$((total >> 20)) MiB into ${dest#$top/}/"
dl=$dest/debs
rm -rf "$dl" "$dest/versions" "$root.new" && mkdir -p "$dl" "$root.new"
# as root apt downloads as _apt: let it write there
[ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$dl"
(cd "$dl" && APT_CONFIG=$apt/apt.conf apt-get -qq download "${want[@]}") ||
	die "cannot download ${want[*]} (fresh lists: $0 -u)"
for d in "$dl"/*.deb; do dpkg-deb -x "$d" "$root.new" || die "dpkg-deb -x $d failed"; done
# only qemu-system-x86_64 runs: the other binaries (37 MiB) go
find "$root.new/usr/bin" -mindepth 1 ! -name qemu-system-x86_64 -delete
rm -rf "$dl" "$root.new/usr/share/doc" "$root.new/usr/share/man"
missing=$(ldd "$root.new/usr/bin/qemu-system-x86_64" | awk '/not found/ { print $1 }' | tr '\n' ' ')
[ -z "$missing" ] ||
	die "bookworm-backports' qemu-system-x86_64 needs ${missing% } (tools/scripts/install-deps.sh --for check installs QEMU 7.2 and its libraries)"
"$root.new/usr/bin/qemu-system-x86_64" -L "$root.new/usr/share/qemu" -device igb,help >/dev/null 2>&1 ||
	die "bookworm-backports' qemu-system-x86_64 has no igb device"
rm -rf "$root" && mv "$root.new" "$root"
printf '%s\n' "${want[@]}" >"$dest/versions"
say "$("$root/usr/bin/qemu-system-x86_64" --version | sed -n 1p) ready in ${root#$top/}/ ($(du -sm "$root" | cut -f1) MiB, $((SECONDS - t0)) s)"
echo "$root"
