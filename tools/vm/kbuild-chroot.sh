#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Where roxe.ko builds for trixie's kernels (issue #37): their headers'
# kbuild wants gcc-14 and trixie's libc, which Debian 12 lacks, so the
# build runs in a trixie chroot made by debootstrap under
# build/vm/kernels/trixie-chroot/ (ROXE_VM_KERNELS moves it: one for all
# trees), with gcc-14, make and the kernel's linux-headers from
# trixie-backports installed there by the chroot's own apt: about 420 MiB,
# 80 s (the package lists go after each install: 90 MiB).
#
#   tools/vm/kbuild-chroot.sh setup REL        the chroot with REL's headers
#   tools/vm/kbuild-chroot.sh run REL CMD...   CMD in it (after setup)
#
# The mirror and keyring are those fetch-kernels.sh took from the host's apt
# sources for trixie-backports (its private sources.list); the host's apt
# state, /boot and /lib/modules are not touched: the chroot's apt is its
# own, and run's mounts (/proc and the tree, at the same path, so that
# build/kmod/'s links resolve) live in a mount namespace of their own that
# ends with CMD. A chroot already set up costs nothing but a stat; needs
# root (debootstrap, chroot) and debootstrap (install-deps.sh --for check).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kernels=${ROXE_VM_KERNELS:-$top/build/vm/kernels}
ch=$kernels/trixie-chroot

die() { echo "kbuild-chroot: $*" >&2; exit 1; }
say() { echo "kbuild-chroot: $*" >&2; }

[ $# -ge 2 ] || die "usage: $0 setup REL | run REL CMD..."
op=$1 rel=$2
shift 2
[[ $rel =~ ^[0-9][0-9a-z.+~-]*-amd64$ ]] || die "not a kernel release: $rel"
hdr=/usr/src/linux-headers-$rel

ready() { [ -f "$ch/.done" ] && [ -f "$ch$hdr/Makefile" ]; }

# in_chroot CMD...: CMD in the chroot with /proc and the tree mounted, in a
# private mount namespace (the mounts go with it)
in_chroot() {
	mkdir -p "$ch$top"
	unshare -m --propagation private sh -ec '
		ch=$1 top=$2; shift 2
		mount -t proc proc "$ch/proc"
		mount --bind "$top" "$ch$top"
		exec chroot "$ch" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			MAKEFLAGS="${MAKEFLAGS-}" "$@"' sh "$ch" "$top" "$@"
}

setup() {
	local uri key t0=$SECONDS new=$ch.new
	[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot) to build for $rel"
	# the mirror and keyring of trixie-backports in fetch-kernels.sh's
	# sources list: "deb [signed-by=KEY] URI trixie-backports main"
	read -r uri key < <(awk '$NF == "main" && $(NF - 1) == "trixie-backports" {
		k = "-"; if ($2 ~ /^\[signed-by=/) { k = $2; sub(/^\[signed-by=/, "", k); sub(/\]$/, "", k) }
		print $(NF - 2), k; exit }' "$kernels/apt/sources.list" 2>/dev/null) ||
		die "no trixie-backports in $kernels/apt/sources.list: run tools/vm/fetch-kernels.sh trixie-bpo"
	[ "$key" != - ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
	if [ ! -f "$ch/.done" ]; then
		command -v debootstrap >/dev/null ||
			die "debootstrap missing: tools/scripts/install-deps.sh --for check"
		say "debootstrap trixie from $uri into ${new#$top/}/ (once: about 420 MiB, 1 to 2 minutes)"
		rm -rf "$new" "$ch"
		debootstrap --variant=minbase --keyring="$key" --include=gcc-14,make \
			trixie "$new" "$uri" >"$kernels/trixie-chroot.log" 2>&1 ||
			{ tail -n 20 "$kernels/trixie-chroot.log" >&2; die "debootstrap failed (log: $kernels/trixie-chroot.log)"; }
		printf 'deb %s %s main\n' "$uri" trixie "$uri" trixie-backports >"$new/etc/apt/sources.list"
		# the host's proxy, nothing else of its apt configuration
		apt-config dump 2>/dev/null | grep -E '^Acquire::(https?|ftp)::Proxy ' \
			>"$new/etc/apt/apt.conf.d/90roxe-proxy" || true
		mv "$new" "$ch"
		: >"$ch/.done"
	fi
	if [ ! -f "$ch$hdr/Makefile" ]; then
		say "installing linux-headers-$rel (trixie-backports) in the chroot"
		cp -L /etc/resolv.conf "$ch/etc/resolv.conf" 2>/dev/null || true
		in_chroot sh -c 'apt-get -qq update && DEBIAN_FRONTEND=noninteractive \
			apt-get -qq -y --no-install-recommends install "linux-headers-$1" &&
			apt-get clean && rm -rf /var/lib/apt/lists/*' \
			sh "$rel" >>"$kernels/trixie-chroot.log" 2>&1 ||
			{ tail -n 20 "$kernels/trixie-chroot.log" >&2; die "cannot install linux-headers-$rel in the chroot"; }
		[ -f "$ch$hdr/Makefile" ] || die "linux-headers-$rel installed no $hdr/Makefile"
	fi
	say "ready: $rel's headers in ${ch#$top/}/ ($((SECONDS - t0)) s, $(du -sxm "$ch" | cut -f1) MiB)"
}

case "$op" in
setup)
	ready && exit 0
	mkdir -p "$kernels"
	# one setup at a time (make -j, several trees): the second finds it done
	exec 9>"$kernels/.chroot.lock"
	flock 9
	ready || setup ;;
run)
	ready || die "no chroot with $rel's headers: $0 setup $rel"
	[ $# -gt 0 ] || die "run: no command"
	in_chroot "$@" ;;
*) die "usage: $0 setup REL | run REL CMD..." ;;
esac
