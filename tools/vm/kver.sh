#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM guest's kernel by name: prints the release of the newest installed
# Debian kernel NAME stands for, one that has its image and modules.dep.
#
#   tools/vm/kver.sh [NAME]     NAME: a full release (6.12.95+deb12-amd64)
#                               or a series (6.1, 6.12); default 6.1
#
# A series matches the releases "NAME.<anything>-amd64" only, so 6.1 never
# picks a 6.12 kernel. Exit 1 (and a line on stderr) when none is installed.
set -euo pipefail

name=${1:-6.1}
usable() { [ -r "/boot/vmlinuz-$1" ] && [ -f "/lib/modules/$1/modules.dep" ]; }

if usable "$name"; then
	echo "$name"
	exit 0
fi
best=
for k in /boot/vmlinuz-"$name".*-amd64; do
	[ -e "$k" ] || continue
	k=${k#/boot/vmlinuz-}
	usable "$k" || continue
	# newest by version order
	if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$k" | sort -V | tail -n1)" = "$k" ]; then
		best=$k
	fi
done
if [ -z "$best" ]; then
	echo "kver: no installed kernel $name (/boot/vmlinuz-$name.*-amd64 with modules): run tools/scripts/install-deps.sh" >&2
	exit 1
fi
echo "$best"
