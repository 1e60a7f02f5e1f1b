#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# No script that sets -o pipefail pipes into a reader that may stop before
# the end of its input (head, grep -q, grep -m, sed q). The writer then
# dies of SIGPIPE when its output does not fit the pipe at once, and under
# pipefail the pipeline fails (141) although the reader found what it
# wanted: a test that fails only when a command prints a little more, or
# a little later, than usual. kmod_loopback's `roxectl stats | head -n 24`
# did that to a CI run. Read all of it instead: sed -n 1,Np; grep PAT
# >/dev/null; grep -c.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
log() { echo "# $*"; }
cd "$top" || exit $KSFT_FAIL

# a pipe (not ||), blanks or a continued line, then the early reader
early='(^|[^|])\|[[:space:]]*(head([[:space:]]|$)|grep[[:space:]]+(-[A-Za-z]*[qml]|--quiet|--max-count)|sed[[:space:]]+(-n[[:space:]]+)?.?[0-9]*q)'

bad=0 n=0
while IFS= read -r f; do
	grep -qE '^[[:space:]]*set[[:space:]]+-[a-z]*o[[:space:]]+pipefail' "$f" || continue
	n=$((n + 1))
	# join continued lines (a trailing | or \) so the reader is on the
	# writer's line; drop comments
	hits=$(awk '
		{ sub(/^[[:space:]]*#.*/, "") }
		held != "" { $0 = held " " $0; held = "" }
		held == "" && !start { start = NR }
		/(\||\\)[[:space:]]*$/ { held = $0; next }
		{ print start ": " $0; start = 0 }
	' "$f" | grep -E "$early")
	if [ -n "$hits" ]; then
		bad=1
		log "$f:"
		sed 's/^/#   /' <<<"$hits"
	fi
done < <(git ls-files '*.sh' 'tools/scripts/*' '.ci/*' 'tools/vm/*' 2>/dev/null |
	 sort -u | while read -r f; do [ -f "$f" ] && [ ! -L "$f" ] && head -c 200 "$f" | grep -q '^#!.*\(ba\)\?sh' && echo "$f"; done)

[ $n -gt 0 ] || { log "FAIL: no script with pipefail found (git ls-files in $top?)"; exit $KSFT_FAIL; }
if [ $bad = 0 ]; then
	log "PASS: $n scripts with pipefail, none pipes into a reader that stops early"
	exit $KSFT_PASS
fi
log "FAIL: under pipefail the writer's SIGPIPE fails the pipeline; read the whole input"
exit $KSFT_FAIL
