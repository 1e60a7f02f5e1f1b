#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make deb: roxe's Debian packages (debian/) into build/deb/: roxe,
# libroxe0, libroxe-dev, roxe-dkms; their detached debug symbols (roxe-dbgsym,
# libroxe0-dbgsym) into build/deb/debug/, so that build/deb/*.deb is what
# apt install takes.
#
#   tools/scripts/deb.sh VERSION      VERSION: the top Makefile's
#
# dpkg-buildpackage runs in a copy of the tree, build/deb/src/roxe-VERSION
# (the tracked files and the untracked ones git does not ignore, as they are
# now): it writes its products to the directory above the tree, and its
# clean step (make clean) would remove this tree's build/. The source
# package (.dsc, .tar.xz), .changes and .buildinfo stay in build/deb/src/.
# Root or not: Rules-Requires-Root is no, so nothing needs fakeroot.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ver=${1:?usage: $0 VERSION}
out=$top/build/deb
src=$out/src/roxe-$ver

need=()
for c in dpkg-buildpackage dh dh_dkms; do command -v "$c" >/dev/null || need+=("$c"); done
if [ ${#need[@]} -gt 0 ]; then
	echo "deb: ${need[*]} missing: tools/scripts/install-deps.sh --for check" \
	     "(dpkg-dev, debhelper, dh-dkms)" >&2
	exit 1
fi
# debian/changelog names the packages' version: it must be the Makefile's
chver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
if [ "$chver" != "$ver" ]; then
	echo "deb: debian/changelog says $chver, the Makefile's VERSION is $ver:" \
	     "add a changelog entry (dch -v $ver)" >&2
	exit 1
fi

rm -rf "$out"
mkdir -p "$src"
# What the tree holds now, without build/ (and .git/): git's list where
# there is one (a file deleted but not yet committed is left out), else
# everything.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$top/$f" ] || [ -L "$top/$f" ]; then printf '%s\0' "$f"; fi
		done | tar -C "$top" --null --no-recursion -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
fi

# Not the caller's make: its flags and command-line variables (MAKEFLAGS)
# would reach debian/rules' make and the Makefile under it.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
echo "deb: dpkg-buildpackage in ${src#$top/} (log: ${out#$top/}/build.log)"
if ! (cd "$src" && dpkg-buildpackage --build=full --no-sign -J) >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed (${out#$top/}/build.log)" >&2
	exit 1
fi
mkdir -p "$out/debug"
shopt -s nullglob
mv "$out"/src/*-dbgsym_*.deb "$out"/src/*.ddeb "$out/debug/"
mv "$out"/src/*.deb "$out"/
ls -l "$out"/*.deb
