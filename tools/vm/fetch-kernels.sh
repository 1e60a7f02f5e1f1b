#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM guests' kernels, fetched and unpacked under build/vm/kernels/,
# never installed: nothing here writes to /boot, /lib/modules, /usr/src or
# /etc/apt, so the host boots as it did (issue #36).
#
#   tools/vm/fetch-kernels.sh [-u] [NAME ...]      default NAMEs: 6.1 6.12
#
# NAME is a series (6.1, 6.12, 7.3), a full release (6.1.0-41-amd64) or
# trixie-bpo. For each, the newest Debian release of the series: bookworm
# has 6.1, bookworm-backports 6.12, trixie-backports 6.16 and later
# (+deb13); trixie-bpo is the newest of trixie-backports, whatever its
# series (issue #37: virtio_net's AF_XDP zero-copy needs 6.13 or later).
# Its packages linux-image-REL (the image and the modules; from 6.19 on
# linux-binary-REL, the image under usr/lib/modules/REL/, linux-modules-REL
# and linux-base-REL), linux-headers-REL and what those headers depend on
# of linux-headers-*-common and linux-kbuild-* are `dpkg-deb -x`ed into one
# tree, build/vm/kernels/root/ (tools/vm/kver.sh --root), so that their
# relative links resolve; absolute links and the headers' Makefile, which
# name /usr/src/..., are pointed into the tree, and depmod writes
# modules.dep there (the packages' postinst would). trixie-backports'
# kernels come without headers: their kbuild needs trixie's gcc and libc,
# so make kmod builds roxe.ko for them in a trixie chroot holding their
# headers (tools/vm/kbuild-chroot.sh). A kernel with its modules under
# usr/lib/modules/ (trixie's are) gets lib/modules/REL and boot/vmlinuz-REL
# links to them in the tree.
#
# A NAME already unpacked costs nothing (no network, well under a second);
# -u asks the mirror for a newer release. Downloads go through a private
# apt configuration in build/vm/kernels/apt/ (its own sources list, lists,
# cache and an empty dpkg status; the host's apt.conf.d is not read, so no
# hook of the host's apt runs): the mirror(s) and keyring the host's apt
# sources use for bookworm, with the suites bookworm, bookworm-backports
# and trixie-backports (Debian 12's debian-archive-keyring holds trixie's
# archive keys), and the host's bookworm-security source (Debian 12's
# current 6.1 is there). ROXE_VM_KERNELS moves build/vm/kernels/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kernels=${ROXE_VM_KERNELS:-$top/build/vm/kernels}
root=$kernels/root
apt=$kernels/apt
suites=(bookworm bookworm-backports trixie-backports)

die() { echo "fetch-kernels: $*" >&2; exit 1; }
say() { echo "fetch-kernels: $*"; }

update=0
if [ "${1:-}" = -u ]; then update=1; shift; fi
case "${1:-}" in -*) die "usage: $0 [-u] [NAME ...]" ;; esac
[ $# -gt 0 ] || set -- 6.1 6.12

# headers REL: REL comes with its headers (not trixie's: their kbuild
# needs a newer gcc and libc than Debian 12 has)
headers() { [[ $1 != *+deb13-* ]]; }

# ready NAME: NAME resolves to a release with its image, modules.dep and
# (where it has them) headers in the tree
ready() {
	local rel
	rel=$("$here/kver.sh" "$1" 2>/dev/null) || return 1
	! headers "$rel" || [ -f "$root/usr/src/linux-headers-$rel/Makefile" ]
}

todo=()
for n in "$@"; do
	[ $update = 0 ] && ready "$n" || todo+=("$n")
done
[ ${#todo[@]} -gt 0 ] || exit 0

# the private apt configuration: setup_apt, aptc, update_lists
# shellcheck source=tools/vm/apt-private.sh
. "$here/apt-private.sh"

# release NAME: the newest release NAME stands for that the mirror has: a
# full release as is, a series its newest "SERIES.<x>[-<abi>]-amd64"
# (never 6.12 for 6.1, nor the -cloud or -rt flavours), trixie-bpo the
# newest "<x>+deb13-amd64" (trixie itself is not in the sources: those are
# trixie-backports')
release() {
	local re=${1//./\\.}
	if [ "$1" = trixie-bpo ]; then re='^[0-9]+\.[0-9][0-9a-z.~]*\+deb13-amd64$'
	elif [[ $1 =~ -amd64$ ]]; then re="^$re\$"; else re="^$re\\.[0-9][0-9a-z.+~]*(-[0-9]+)?-amd64\$"; fi
	aptc pkgnames linux-image- | sed -n 's/^linux-image-//p' | sed 's/-unsigned$//' |
		{ grep -E "$re" || true; } | sort -uV | tail -n 1
}

# has PKG: PKG has a candidate (a version to download)
has() { [ -n "$(aptc show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p')" ]; }

field() { aptc show --no-all-versions "$1" | sed -n "s/^$2: //p"; }

# packages REL: the image (signed or not, whichever the mirror has; from
# 6.19 on linux-binary-REL with linux-modules-REL and linux-base-REL), the
# headers, and the -common headers and kbuild they depend on
packages() {
	local rel=$1 img=linux-image-$1
	if has "linux-binary-$rel" || has "linux-binary-unsigned-$rel"; then
		img=linux-binary-$rel
		has "$img" || img=linux-binary-unsigned-$rel
		echo "$img"
		echo "linux-modules-$rel"
		echo "linux-base-$rel"
	else
		has "$img" || img=linux-image-$rel-unsigned
		has "$img" || die "no $img on the mirror"
		echo "$img"
	fi
	headers "$rel" || return 0
	echo "linux-headers-$rel"
	field "linux-headers-$rel" Depends | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' |
		grep -E '^linux-(headers|kbuild)-' || true
}

# unpack REL DEB...: the packages into the tree, links and Makefile fixed,
# modules.dep written last (kver.sh takes a release only once it exists)
unpack() {
	local rel=$1 d l t
	shift
	for d in "$@"; do dpkg-deb -x "$d" "$root" || die "dpkg-deb -x $d failed"; done
	# absolute links (lib/modules/REL/build -> /usr/src/...) into the tree
	while IFS= read -r -d '' l; do
		t=$(readlink "$l")
		ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$root$t")" "$l"
	done < <(find "$root" -type l -lname '/*' -print0)
	# the headers' Makefile includes /usr/src/linux-headers-*-common/Makefile:
	# its sibling in the tree instead, wherever the tree is
	! headers "$rel" ||
		sed -i 's|^include /usr/src/\(.*\)$|include $(dir $(realpath $(lastword $(MAKEFILE_LIST))))../\1|' \
			"$root/usr/src/linux-headers-$rel/Makefile"
	# trixie's kernels live under usr/lib/modules/REL (from 6.19 the image
	# too, as vmlinuz there): where kver.sh, depmod and build-initramfs.sh
	# look, links to them
	if [ -d "$root/usr/lib/modules/$rel/kernel" ] && [ ! -e "$root/lib/modules/$rel" ]; then
		mkdir -p "$root/lib/modules"
		ln -sfn "../../usr/lib/modules/$rel" "$root/lib/modules/$rel"
	fi
	if [ ! -e "$root/boot/vmlinuz-$rel" ] && [ -f "$root/usr/lib/modules/$rel/vmlinuz" ]; then
		mkdir -p "$root/boot"
		ln -sfn "../usr/lib/modules/$rel/vmlinuz" "$root/boot/vmlinuz-$rel"
	fi
	[ -d "$root/lib/modules/$rel/kernel" ] || die "linux-image for $rel holds no lib/modules/$rel"
	# the host's depmod.d stays out (-C: an empty directory)
	depmod -C "$apt/empty" -b "$root" "$rel" || die "depmod for $rel failed"
}

fetch() {
	local name=$1 rel pkgs p size total=0 debs=() t0=$SECONDS dl
	rel=$(release "$name")
	[ -n "$rel" ] || die "no linux-image for $name in ${suites[*]} on the mirror"
	mapfile -t pkgs < <(packages "$rel")
	say "$name: $rel, downloading:"
	for p in "${pkgs[@]}"; do
		size=$(field "$p" Size)
		total=$((total + ${size:-0}))
		printf '    %-48s %-22s %5d MiB\n' "$p" "$(field "$p" Version)" $((${size:-0} >> 20))
	done
	say "$name: $((total >> 20)) MiB into ${kernels#$top/}/"
	dl=$kernels/debs
	rm -rf "$dl" && mkdir -p "$dl"
	# as root apt downloads as _apt: let it write there
	[ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$dl"
	if ! (cd "$dl" && APT_CONFIG=$apt/apt.conf apt-get -qq download "${pkgs[@]}"); then
		[ $updated = 0 ] || die "cannot download ${pkgs[*]}"
		say "$name: the download failed (has the mirror moved on?): fresh package lists, and the newest release in them"
		update_lists 1
		fetch "$name"
		return
	fi
	for p in "${pkgs[@]}"; do debs+=("$dl/${p}_"*.deb); done
	unpack "$rel" "${debs[@]}"
	rm -rf "$dl"
	ready "$rel" || die "$rel unpacked, but kver.sh does not take it"
	say "$name: $rel ready in ${root#$top/}/ ($((SECONDS - t0)) s)"
}

command -v dpkg-deb >/dev/null || die "dpkg-deb missing"
command -v depmod >/dev/null || die "depmod missing: tools/scripts/install-deps.sh --for check (kmod)"
mkdir -p "$kernels"
# one fetch at a time (make -j, two tests at once); the second finds the
# kernels there
exec 9>"$kernels/.lock"
flock 9
setup_apt
update_lists
for n in "${todo[@]}"; do
	[ $update = 0 ] && ready "$n" && continue
	if [ $update = 1 ] && ready "$n" && [ "$(release "$n")" = "$("$here/kver.sh" "$n")" ]; then
		continue
	fi
	fetch "$n"
done
