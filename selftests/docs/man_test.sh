#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The manual pages (man/): each renders without a warning (groff -ww, and
# man and mandoc when they are installed) and has the sections a page needs;
# every program in build/bin has a page of section 1 or 8 and every such page
# a program; every long option a program's --help names is in its page; every
# program answers --version with one line, NAME VERSION (the top Makefile's
# VERSION), and exit 0, and names --version in its --help and in a .TP
# paragraph of its page's options; the roxe pages SEE ALSO names exist; roxe_verbs(3) has every function of
# include/roxe/verbs.h in its SYNOPSIS, and its example compiles and links
# against build/lib/libroxe.a.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
man=$top/man bin=$top/build/bin
log() { echo "# $*"; }

command -v groff >/dev/null || { log "FAIL: missing: groff is missing (tools/scripts/install-deps.sh)"; exit $KSFT_FAIL; }
[ -d "$bin" ] || { log "FAIL: missing: $bin not built (make)"; exit $KSFT_FAIL; }
version=$(sed -n 's/^VERSION[[:space:]]*:\?=[[:space:]]*//p' "$top/Makefile")
[ -n "$version" ] || { log "FAIL: no VERSION in $top/Makefile"; exit $KSFT_FAIL; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }
# has PAGE SECTION-NAME: the page has that .SH
has() { grep -q "^\.SH \"\?$2\"\?\$" "$1"; }

pages=("$man"/*.[1-8])
[ -e "${pages[0]}" ] || { bad "no pages in $man"; exit $KSFT_FAIL; }

for p in "${pages[@]}"; do
	f=$(basename "$p") name=${f%.*} sec=${f##*.}
	# Rendering: groff's warnings (all of them), man's, mandoc's lint.
	groff -man -ww -z -Tutf8 "$p" >"$tmp/out" 2>&1
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -E UTF-8 -l "$p" 2>>"$tmp/out" >/dev/null
	fi
	if command -v mandoc >/dev/null; then
		mandoc -T lint -W warning "$p" >>"$tmp/out" 2>&1
	fi
	if [ -s "$tmp/out" ]; then
		bad "$f renders with warnings:"; sed 's/^/#   /' "$tmp/out" | head -n 10
	else
		ok "$f renders without a warning"
	fi
	# The header names the page; NAME starts with it.
	miss=""
	grep -qi "^\.TH \"\?$name\"\? $sec " "$p" || miss="$miss .TH"
	grep -A1 '^\.SH NAME' "$p" | tail -n 1 | grep -q "^$name \\\\- " || miss="$miss NAME-line"
	for s in NAME DESCRIPTION "SEE ALSO"; do has "$p" "$s" || miss="$miss $s"; done
	case $sec in
	1|8) for s in SYNOPSIS "EXIT STATUS" EXAMPLES; do has "$p" "$s" || miss="$miss $s"; done
	     # a program with subcommands documents them (and their options) as COMMANDS
	     has "$p" OPTIONS || has "$p" COMMANDS || miss="$miss OPTIONS" ;;
	3) for s in SYNOPSIS "RETURN VALUE" EXAMPLES; do has "$p" "$s" || miss="$miss $s"; done ;;
	esac
	# roxe's own pages named in SEE ALSO exist.
	for ref in $(sed -n '/^\.SH "\?SEE ALSO/,$p' "$p" | grep -oE '^\.BR (roxe[-_a-z]*|roxed|roxectl|faultwire) \([1-8]\)' |
		     sed -E 's/^\.BR ([^ ]*) \(([1-8])\)/\1.\2/'); do
		[ -e "$man/$ref" ] || miss="$miss see-also:$ref"
	done
	if [ -n "$miss" ]; then bad "$f lacks:$miss"; else ok "$f has its sections"; fi
	# An option's heading (-x, --long) opens a .TP paragraph of its own:
	# without one it renders inside the option before it.
	heads=$(awk '/^\.B[RI]* \\-[A-Za-z0-9] ", " \\-\\-/ && prev != ".TP" { print NR": "$0 }
		     { prev = $0 }' "$p")
	if [ -n "$heads" ]; then
		bad "$f: option headings outside a .TP paragraph: $heads"
	else
		ok "$f: every option heading opens its .TP paragraph"
	fi
done

# Every program has a page, every page of section 1 or 8 a program; the
# options of --help are in the page (written \-\-name in roff).
for t in "$bin"/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	name=$(basename "$t")
	p=$(ls "$man/$name".[18] 2>/dev/null | head -n 1)
	if [ -z "$p" ]; then
		bad "build/bin/$name has no page man/$name.1 or man/$name.8"
		continue
	fi
	ok "build/bin/$name: $(basename "$p")"
	"$t" --help >"$tmp/help" 2>&1 || { bad "$name --help exits $?"; continue; }
	miss=""
	for o in $(grep -oE -- '--[a-z][a-z0-9_-]*[a-z0-9]' "$tmp/help" | sort -u); do
		roff=$(sed 's/-/\\-/g' <<<"$o")
		grep -qF -- "$roff" "$p" || miss="$miss $o"
	done
	if [ -n "$miss" ]; then bad "$(basename "$p") lacks options of $name --help:$miss"
	else ok "$(basename "$p") has every option of $name --help"; fi
	# --version: "NAME VERSION" alone on stdout, nothing on stderr, exit 0,
	# as GNU programs; named by --help and in a .TP paragraph of the page
	out=$("$t" --version 2>"$tmp/err"); rc=$?
	if [ $rc = 0 ] && [ "$out" = "$name $version" ] && [ ! -s "$tmp/err" ]; then
		ok "$name --version: $out"
	else
		bad "$name --version: exit $rc, stdout '$(head -c 200 <<<"$out")', stderr '$(head -c 200 "$tmp/err")'" \
		    "(want '$name $version', exit 0)"
	fi
	grep -q -- '--version' "$tmp/help" || bad "$name --help does not name --version"
	awk 'prev == ".TP" && /\\-\\-version/ { found = 1 } { prev = $0 } END { exit !found }' "$p" ||
		bad "$(basename "$p") documents --version in no .TP paragraph of its own"
done
for p in "$man"/*.[18]; do
	f=$(basename "$p")
	[ -x "$bin/${f%.*}" ] || bad "$f documents ${f%.*}, which make does not build"
done

# roxe_verbs(3): the whole API in the SYNOPSIS, an example that builds.
p=$man/roxe_verbs.3
if [ -f "$p" ]; then
	miss=""
	syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$p")
	for fn in $(grep -oE '\broxe_[a-z_]+\(' "$top/include/roxe/verbs.h" | tr -d '(' | sort -u); do
		grep -q "\\b$fn(" <<<"$syn" || miss="$miss $fn"
	done
	if [ -n "$miss" ]; then bad "roxe_verbs.3 SYNOPSIS lacks:$miss"
	else ok "roxe_verbs.3 SYNOPSIS has every function of verbs.h"; fi
	# The first .EX block of EXAMPLES, roff escapes undone.
	sed -n '/^\.SH EXAMPLES/,$p' "$p" | awk '/^\.EX/ { inb = 1; next } /^\.EE/ { exit } inb' |
		sed -e 's/\\&//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$tmp/example.c"
	lib=$top/build/lib/libroxe.a
	if [ ! -f "$lib" ]; then
		log "roxe_verbs.3 example not built: $lib is missing"
	elif ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$top/include" -o "$tmp/example" \
		"$tmp/example.c" "$lib" -lxdp -lbpf -lelf -lz -ldeflate -lpcap -lnl-route-3 -lnl-3 -lpthread \
		>"$tmp/cc" 2>&1; then
		ok "roxe_verbs.3 example compiles and links ($(wc -l <"$tmp/example.c") lines)"
	else
		bad "roxe_verbs.3 example does not build:"; sed 's/^/#   /' "$tmp/cc" | head -n 20
	fi
fi

log "$((n - fails))/$n checks passed"
[ $fails = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
