#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the documentation promises agrees with the code and with a test, as
# man_test.sh does for options. Every item of a manual page's LIMITS section
# and every bullet of README.md's "Limits and known issues" carries a check:
#   roff:      .\" check: TOKEN ...
#   markdown:  <!-- check: TOKEN ... -->
# TOKEN is one of
#   EXPR=TEXT  EXPR, a C expression of include/'s constants (no spaces),
#              has the value TEXT (a C number), and TEXT is written in the
#              item: the number a user reads is the one the code uses;
#   FILE:WORD  FILE (a path from the top) is a test of a suite (its folder's
#              Makefile names it) and holds WORD: the test that shows the
#              claim, and where in it.
# An item needs at least one FILE:WORD. Fails on an item without a check, a
# check without a test, a value that differs, a test that no suite runs.
#
# Exit: 0 pass, 1 fail (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
log() { echo "# $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }

# items SOURCE KIND: one file per item under $tmp/items, SOURCE:N.text (the
# prose) and SOURCE:N.check (the check tokens, one per line).
items() {
	local src=$1 kind=$2 name
	name=$(basename "$src")
	awk -v dir="$tmp/items" -v name="$name" -v kind="$kind" '
	function flush() { if (n) { close(t); close(c) } }
	kind == "roff" && /^\.SH / { on = ($0 ~ /^\.SH "?LIMITS"?$/); flush(); n = n; next }
	kind == "md" && /^## / { on = ($0 == "## Limits and known issues"); next }
	!on { next }
	(kind == "roff" && /^\.IP/) || (kind == "md" && /^- /) {
		n++; t = dir "/" name ":" n ".text"; c = dir "/" name ":" n ".check"
		printf "" > t; printf "" > c
		if (kind == "roff") next
	}
	!n { next }
	{
		line = $0
		if ((kind == "roff" && line ~ /^\.\\" check:/) ||
		    (kind == "md" && line ~ /<!-- check:/)) {
			sub(/.*check:[ \t]*/, "", line); sub(/[ \t]*-->.*/, "", line)
			m = split(line, tok, /[ \t]+/)
			for (i = 1; i <= m; i++) if (tok[i] != "") print tok[i] > c
			next
		}
		print line > t
	}' "$src"
}

mkdir -p "$tmp/items"
srcs=0
for p in "$top"/man/*.[1-8]; do
	grep -q '^\.SH "\?LIMITS"\?$' "$p" || continue
	items "$p" roff
	srcs=$((srcs + 1))
done
items "$top/README.md" md
[ "$srcs" -gt 0 ] || bad "no manual page has a LIMITS section"
ls "$tmp/items"/README.md:*.text >/dev/null 2>&1 ||
	bad "README.md has no bullets under \"## Limits and known issues\""

# The values of every EXPR, from one program built on include/.
{
	echo '#include <stdio.h>'
	echo '#include "roxe/limits.h"'
	echo '#include "roxe/kabi.h"'
	echo '#include "roxe/xdp.h"'
	echo 'int main(void) {'
	cat "$tmp"/items/*.check 2>/dev/null | sed -n 's/^\([^=:]*\)=.*/\1/p' | sort -u |
		while read -r e; do
			printf '\tprintf("%%s %%lld\\n", "%s", (long long)(%s));\n' "$e" "$e"
		done
	echo 'return 0; }'
} >"$tmp/values.c"
if ! cc -std=gnu11 -I"$top/include" -I"$top/include/uapi" -I"$top/include/private" \
	-o "$tmp/values" "$tmp/values.c" 2>"$tmp/cc.err"; then
	bad "the checks' expressions do not compile on include/:"
	sed -n 's/^/#   /;1,10p' "$tmp/cc.err"
	exit $KSFT_FAIL
fi
"$tmp/values" >"$tmp/values.txt"

# in_suite FILE: FILE's folder's Makefile names it (as a program or a
# source of one), or its Kbuild (a test module, STEM.o), or it is a C
# program a VM test of the suite builds (build/vm/STEM).
in_suite() {
	local f=$1 base stem dir
	base=$(basename "$f") stem=${base%.*} dir=$(dirname "$f")
	{ [ -f "$dir/Makefile" ] &&
		grep -Eq "(^|[[:space:]=])($base|$stem)([[:space:]\\\\]|\$)" "$dir/Makefile"; } ||
	{ [ -f "$dir/Kbuild" ] && grep -Eq "(^|[[:space:]=])$stem\.o([[:space:]]|\$)" "$dir/Kbuild"; } ||
	{ [ "${base##*.}" = c ] && grep -lq "build/vm/$stem\b" "$dir"/*.sh 2>/dev/null; }
}

for t in "$tmp"/items/*.text; do
	item=$(basename "$t" .text) c=${t%.text}.check
	what="$item ($(tr -s ' \n' '  ' <"$t" | sed 's/^ *//; s/\\f[BIRP]//g' | cut -c1-50)...)"
	if [ ! -s "$c" ]; then
		bad "$what: no check comment"
		continue
	fi
	tests=0 errs=""
	while read -r tok; do
		case $tok in
		*/*:*)
			f=${tok%%:*} w=${tok#*:}
			tests=$((tests + 1))
			if [ ! -f "$top/$f" ]; then
				errs="$errs; $f does not exist"
			elif ! in_suite "$top/$f"; then
				errs="$errs; $f is in no suite (its Makefile does not name it)"
			elif ! grep -Fq -- "$w" "$top/$f"; then
				errs="$errs; $f does not hold \"$w\""
			fi ;;
		*=*)
			e=${tok%%=*} v=${tok#*=}
			got=$(awk -v e="$e" '$1 == e { print $2 }' "$tmp/values.txt")
			want=$(printf '%d' "$v" 2>/dev/null) || want="?"
			[ "$got" = "$want" ] || errs="$errs; $e is $got, the check says $v"
			# the number as written, not inside a longer one
			grep -Eq "(^|[^0-9a-zA-Z])$v([^0-9a-zA-Z]|\$)" "$t" ||
				errs="$errs; $v ($e) is not written in the item" ;;
		*) errs="$errs; \"$tok\" is neither EXPR=VALUE nor FILE:WORD" ;;
		esac
	done <"$c"
	[ $tests -gt 0 ] || errs="$errs; no test named (FILE:WORD)"
	if [ -n "$errs" ]; then
		bad "$what: ${errs#; }"
	else
		ok "$what: $(wc -l <"$c") checks hold"
	fi
done

log "$((n - fails))/$n items hold"
[ $fails = 0 ] && exit $KSFT_PASS || exit $KSFT_FAIL
