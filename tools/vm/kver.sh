#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM guest's kernel by name: prints the release of the newest Debian
# kernel NAME stands for among those unpacked under build/vm/kernels/root/
# (tools/vm/fetch-kernels.sh), one with its image and modules.dep. The
# host's own kernels (/boot, /lib/modules) are never looked at: guest
# kernels are not installed.
#
#   tools/vm/kver.sh [NAME]     NAME: a full release (6.12.95+deb12-amd64),
#                               a series (6.1, 6.12, 7.3) or trixie-bpo
#                               (trixie-backports' kernels: the newest
#                               "<x>+deb13-amd64"); default 6.1
#   tools/vm/kver.sh --root     the tree the kernels are unpacked in
#
# A series matches the releases "NAME.<anything>-amd64" only, so 6.1 never
# picks a 6.12 kernel. Exit 1 (and a line on stderr) when none is there.
# ROXE_VM_KERNELS moves build/vm/kernels/.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
root=${ROXE_VM_KERNELS:-$top/build/vm/kernels}/root
if [ "${1:-}" = --root ]; then
	echo "$root"
	exit 0
fi
name=${1:-6.1}
usable() { [ -r "$root/boot/vmlinuz-$1" ] && [ -f "$root/lib/modules/$1/modules.dep" ]; }

if usable "$name"; then
	echo "$name"
	exit 0
fi
glob=$name.*-amd64
[ "$name" != trixie-bpo ] || glob=*+deb13-amd64
best=
for k in "$root/boot/vmlinuz-"$glob; do
	[ -e "$k" ] || continue
	k=${k##*/vmlinuz-}
	usable "$k" || continue
	# newest by version order
	if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$k" | sort -V | tail -n1)" = "$k" ]; then
		best=$k
	fi
done
if [ -z "$best" ]; then
	echo "kver: no guest kernel $name in $root (vmlinuz-$name.*-amd64 with modules): run make kernels (tools/vm/fetch-kernels.sh $name)" >&2
	exit 1
fi
echo "$best"
