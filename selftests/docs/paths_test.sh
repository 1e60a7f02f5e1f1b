#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Paths the tree names in its comments, documentation and help texts exist:
# every word/word.EXT (EXT: c, h, sh, md, mk, map, py; man/NAME.[1-8])
# whose first part is one of ours (user/, daemon/, kmod/, bpf/, tools/,
# include/, selftests/, docs/, man/; roxe/ for include/roxe/,
# include/uapi/roxe/ or include/private/roxe/, as the compiler finds it;
# verbs/, transport/, core/, port/, wire/ for user/'s layers) is a file from
# the top, from the naming file's directory or its parent, or from user/,
# include/, include/uapi/ or include/private/. Others' paths (URLs, the
# kernel's drivers/... and include/linux/, rdma-core's providers/...), build
# outputs (build/) and placeholders (NAME) are not ours to check.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
log() { echo "# $*"; }

command -v grep >/dev/null && echo x | grep -qP 'x' 2>/dev/null ||
	{ log "SKIP: grep has no -P"; exit $KSFT_SKIP; }
cd "$top" || exit $KSFT_FAIL

# A path starts where no path character, $, <, %, @, : or ~ precedes it
# (so not inside a URL, $VAR/..., <sys/x.h> or an absolute path).
re='(?<![A-Za-z0-9_./$<@:~%-])[A-Za-z0-9_][A-Za-z0-9_.+-]*(/[A-Za-z0-9_][A-Za-z0-9_.+-]*)+\.(bpf\.c|c|h|sh|md|mk|map|py|[1-8])(?![A-Za-z0-9_/])'
ours='^(user|daemon|kmod|bpf|tools|include|selftests|docs|man|roxe|verbs|transport|core|port|wire)/'

files=$(find README.md Makefile user daemon kmod bpf tools include selftests docs man \
	-type f ! -name '*.png' 2>/dev/null)
n=0 stale=0
while IFS=: read -r file line ref; do
	[ -n "$ref" ] || continue
	[[ $ref =~ $ours ]] || continue
	case $ref in
	tools/testing/* | *NAME*) continue ;;	# the kernel's; placeholders
	man/*) ;;
	*.[1-8]) continue ;;			# a version, not a page
	esac
	n=$((n + 1))
	dir=$(dirname "$file")
	for c in "$ref" "$dir/$ref" "$dir/../$ref" "user/$ref" "include/$ref" \
		"include/uapi/$ref" "include/private/$ref"; do
		[ -e "$c" ] && continue 2
	done
	stale=$((stale + 1))
	log "FAIL: $file:$line names $ref, which is not there"
done < <(grep -IHnoP "$re" $files 2>/dev/null)

if [ "$n" = 0 ]; then
	log "FAIL: found no paths at all: the pattern is broken"
	exit $KSFT_FAIL
fi
if [ "$stale" = 0 ]; then
	log "ok: all $n paths the tree names exist"
	exit $KSFT_PASS
fi
log "$stale of $n paths the tree names are not there"
exit $KSFT_FAIL
